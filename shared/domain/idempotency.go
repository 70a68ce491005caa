package domain

import "time"

// MaxIdempotencyKey bounds an Idempotency-Key header's value (characters).
const MaxIdempotencyKey = 255

// IdempotencyTTL is how long a company's Idempotency-Key is remembered.
const IdempotencyTTL = 24 * time.Hour

// States of an Idempotency-Key's record.
const (
	KeyPending = "pending" // its first request is being served
	KeyDone    = "done"    // its first request was answered; Status (and Body or ExecutionID) say how
)

// IdempotencyRecord is what a company's Idempotency-Key stands for: the fingerprint of the
// request it first came with, and once answered, the answer to give again.
type IdempotencyRecord struct {
	Company     string
	Key         string
	Fingerprint string // of the first request (method, path, query, negotiating headers, body)
	State       string // KeyPending or KeyDone
	Status      int    // the first answer's HTTP status (done)
	// SessionID and ExecutionID name the execution the first request queued (an asynchronous
	// execute): a retry answers with its current status.
	SessionID   string
	ExecutionID string
	// Body is the first answer kept to be given again (a synchronous execute's result); nil when
	// it was not kept (a stream, or one too large).
	Body      []byte
	Streamed  bool // the first answer was a stream, which is not replayed
	CreatedAt time.Time
	ExpiresAt time.Time
}
