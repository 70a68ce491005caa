package knowledge

// The feature answers with domain records and the files they name; what a read derives from
// them is domain's (KnowledgeBase.Progress, LiveSources, SourceStatus …) and the JSON views are
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
