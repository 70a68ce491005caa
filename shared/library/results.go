package library

// The feature answers with domain records and the files a collection holds; what a read derives
// from them is domain's (domain.SummarizeCollection) and the JSON views are built in api.

import "github.com/agentorch/agentorch/shared/domain"

// Collection is a collection with those of its files that still exist, in the order they were
// added.
type Collection struct {
	*domain.Collection
	Files []*domain.File
}

// BulkItem is what a bulk or add-files operation did with one id of its request: Status
// ItemSucceeded, or ItemFailed with Error, a reason a client may read.
type BulkItem struct {
	FileID string
	Status string
	Error  string
}

// Statuses of bulk items.
const (
	ItemSucceeded = "success"
	ItemFailed    = "failed"
)
