package domain

import "time"

// Watched is an execution on the watchdog's list: one that is queued or running, and the time
// after which the watchdog looks at it (its due time).
type Watched struct {
	SessionID   string
	ExecutionID string
	Status      string // ExecQueued or ExecRunning, as the execution was when it was put on the list
	Due         time.Time
}

// Lease is a session's execution lease as the watchdog reads it: held until Until (zero: not
// held) by a run of ExecutionID (empty when its holder did not say which).
type Lease struct {
	Until       time.Time
	ExecutionID string
}

// Live reports whether the lease is still held at now, as taking it judges (a lease is free
// once now is past Until): a holder whose lease has passed is dead.
func (l Lease) Live(now time.Time) bool {
	return !l.Until.IsZero() && l.Until.UnixMilli() >= now.UnixMilli()
}
