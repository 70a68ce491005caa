// Package awserr holds what the AWS SDK adapters (shared/bedrock, shared/rerank,
// shared/embeddings) judge alike about a failed call: whether its connection dropped, and what of
// the service's message a client may see.
package awserr

import (
	"errors"
	"io"
	"strings"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
)

// MaxMessageRunes bounds a service message shown to a client.
const MaxMessageRunes = 300

// Dropped reports a connection that failed under a call (reset, closed, its answer cut short):
// a later attempt may succeed, as the SDK's own retryer (off for these calls) would judge.
func Dropped(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || (retry.RetryableConnectionError{}).IsErrorRetryable(err) == aws.TrueTernary
}

// Message bounds a service's error message to MaxMessageRunes and replaces its control
// characters before clients see it; an empty message reads "invalid request".
func Message(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
	if r := []rune(s); len(r) > MaxMessageRunes {
		s = string(r[:MaxMessageRunes]) + "…"
	}
	if s == "" {
		return "invalid request"
	}
	return s
}
