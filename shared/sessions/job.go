package sessions

import (
	"context"
	"encoding/json"

	"github.com/agentorch/agentorch/shared/domain"
)

// maxJobBytes bounds a job body: two UUIDs and their keys need about 100 bytes.
const maxJobBytes = 1024

// job is the body of an execution-queue message. The sessions feature owns its format: the
// queue adapter only carries bodies.
type job struct {
	SessionID   string `json:"session_id"`
	ExecutionID string `json:"execution_id"`
}

// encodeJob is the body of the message that runs a queued execution.
func encodeJob(sessionID, executionID string) string {
	b, _ := json.Marshal(job{SessionID: sessionID, ExecutionID: executionID}) // two strings: cannot fail
	return string(b)
}

// ParseJob reads the session and execution ids from a message body that Enqueue sent. Both must
// be UUIDs in canonical form; anything else is an invalid_request_error naming the field. Unknown
// fields are ignored, so a newer sender may add some while older workers drain the queue.
func ParseJob(body string) (sessionID, executionID string, err error) {
	if len(body) > maxJobBytes {
		return "", "", domain.Invalid([]domain.FieldError{{Message: "job body is larger than 1 KiB"}})
	}
	var j job
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		return "", "", &domain.Error{Kind: domain.KindInvalid, Message: "job body is not a JSON object of strings", Err: err}
	}
	var bad []domain.FieldError
	for _, f := range []struct{ name, v string }{{"session_id", j.SessionID}, {"execution_id", j.ExecutionID}} {
		switch {
		case f.v == "":
			bad = append(bad, domain.FieldError{Field: f.name, Message: "is required"})
		case !domain.IsID(f.v):
			bad = append(bad, domain.FieldError{Field: f.name, Message: "must be a UUID"})
		}
	}
	if bad != nil {
		return "", "", domain.Invalid(bad)
	}
	return j.SessionID, j.ExecutionID, nil
}

// ProcessJob runs the queued execution an execution-queue message names: the worker function's
// whole work. What the error's kind says decides the message's fate (domain.Kind.Retryable):
// internal failures, overload (the session is busy) and rate limits are delivered again; an
// outcome RunQueued recorded on the execution for the client (invalid, not found, permission …)
// is not. A body that is not a job is an internal error, so that it ends in the dead-letter
// queue rather than vanish.
func (s *Service) ProcessJob(ctx context.Context, body string) error {
	sessionID, execID, err := ParseJob(body)
	if err != nil {
		return &domain.Error{Kind: domain.KindInternal, Message: "malformed execution job", Err: err}
	}
	return s.RunQueued(ctx, sessionID, execID)
}
