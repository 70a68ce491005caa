package knowledge

// The feature answers with domain records and the records they need to be read (the files a
// collection or a knowledge base names); what a read derives from them is domain's
// (domain.SummarizeCollection, KnowledgeBase.Progress, LiveSources …) and the JSON views are
// built in api.

import "github.com/agentorch/agentorch/shared/domain"

// KB is a knowledge base as reads show it (a running run's live processing_metadata, see
// presentKB) with the company's files its datasources and selection name, by id: a
// datasource whose file is absent was deleted.
type KB struct {
	*domain.KnowledgeBase
	SourceFiles map[string]*domain.File
}

// KBStatus answers check_status: the knowledge base, and whether its status changed within the
// status window (Limits.StatusWindow).
type KBStatus struct {
	KB      *KB
	Updated bool
}

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
