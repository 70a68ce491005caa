package sqs

import (
	"encoding/json"

	"github.com/agentorch/agentorch/shared/domain"
)

// maxJobBytes bounds a job body: two UUIDs and their keys need about 100 bytes.
const maxJobBytes = 1024

// job is the body of an execution-queue message.
type job struct {
	SessionID   string `json:"session_id"`
	ExecutionID string `json:"execution_id"`
}

// ParseJob reads the session and execution ids from a message body that Dispatch sent. Both must
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
