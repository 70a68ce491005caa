package domain

import "time"

// ExecutionFilter picks one page of an owner's executions, newest first (the traces list). An
// execution is listed once it is written finished or paused with the owner it ran for
// (Execution.Owner); a queued or running one is on the watchdog's list instead.
type ExecutionFilter struct {
	AgentID string    // only the runs of sessions opened from this stored agent ("": every one)
	Status  string    // only executions of this status ("": every one)
	Since   time.Time // only executions created at or after it (zero: no bound)
	Until   time.Time // only executions created before it (zero: no bound)
	After   string    // the cursor a page before gave ("": from the newest)
	Limit   int       // at most this many executions (1 to MaxPage of the store)
}

// ExecutionStatuses are the statuses an execution may have, as filters name them.
var ExecutionStatuses = []string{ExecQueued, ExecRunning, ExecRequiresAction, ExecCompleted, ExecFailed, ExecCancelled}
