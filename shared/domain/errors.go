// Package domain holds the entities, validation rules and error kinds of the service. It does no
// I/O and knows nothing of AWS or HTTP beyond the status each error kind maps to.
package domain

import (
	"errors"
	"fmt"
	"net/http"
)

// Kind classifies an error for clients; each kind has one HTTP status and one error.type.
type Kind int

// The error kinds of the service, in the order of the STYLE.md taxonomy.
const (
	KindInternal Kind = iota
	KindInvalid
	KindUnauthenticated
	KindPermission
	KindNotFound
	KindMethodNotAllowed
	KindConflict
	KindTooLarge
	KindUnsupportedMedia
	KindRateLimited
	KindOverloaded
	// KindRequestTimeout is a request body that did not arrive in time (the dev server's read
	// limit; API Gateway hands Lambda whole bodies).
	KindRequestTimeout
	// KindHeadersTooLarge is a request line and headers over API Gateway's limit (dev server).
	KindHeadersTooLarge
	// KindUnprocessable is a request that reads well but cannot be served as sent: an
	// Idempotency-Key used before with another request (draft-ietf-httpapi-idempotency-key-header).
	KindUnprocessable
)

// kindInfo is the single table from kind to HTTP status and error.type.
var kindInfo = map[Kind]struct {
	status int
	typ    string
}{
	KindInternal:         {http.StatusInternalServerError, "api_error"},
	KindInvalid:          {http.StatusBadRequest, "invalid_request_error"},
	KindUnauthenticated:  {http.StatusUnauthorized, "authentication_error"},
	KindPermission:       {http.StatusForbidden, "permission_error"},
	KindNotFound:         {http.StatusNotFound, "not_found_error"},
	KindMethodNotAllowed: {http.StatusMethodNotAllowed, "invalid_request_error"},
	KindConflict:         {http.StatusConflict, "conflict_error"},
	KindTooLarge:         {http.StatusRequestEntityTooLarge, "request_too_large"},
	KindUnsupportedMedia: {http.StatusUnsupportedMediaType, "invalid_request_error"},
	KindRateLimited:      {http.StatusTooManyRequests, "rate_limit_error"},
	KindOverloaded:       {http.StatusServiceUnavailable, "overloaded_error"},
	KindRequestTimeout:   {http.StatusRequestTimeout, "invalid_request_error"},
	KindHeadersTooLarge:  {http.StatusRequestHeaderFieldsTooLarge, "request_too_large"},
	KindUnprocessable:    {http.StatusUnprocessableEntity, "invalid_request_error"},
}

// Status is the HTTP status code of the kind.
func (k Kind) Status() int { return kindInfo[k].status }

// Retryable reports whether an operation that failed with the kind may succeed if tried again
// unchanged: internal failures, overload and rate limits. A queue consumer returns such errors
// so the message is delivered again; any other kind is an outcome a redelivery could only repeat.
func (k Kind) Retryable() bool {
	return k == KindInternal || k == KindOverloaded || k == KindRateLimited
}

// Type is the error.type string clients see for the kind.
func (k Kind) Type() string { return kindInfo[k].typ }

// Fixed client-facing messages that the contract spells out word for word.
const (
	MsgBadCredentials = "Invalid or missing authentication credentials"
	MsgKeyExpired     = "API key has expired"
	MsgNoPermission   = "You do not have permission to access this resource"
	MsgInternal       = "An internal error occurred. Please try again later."
)

// FieldError names one invalid field by its dotted path.
type FieldError struct {
	Field   string
	Message string
}

// Error is an error with a kind and a message that is safe to show to clients.
type Error struct {
	Kind    Kind
	Message string
	Fields  []FieldError
	Err     error // the cause, for logs only
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Message, e.Err)
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds a client-safe error of kind k.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Wrap attaches a client-safe message and kind to a cause that only the log sees.
func Wrap(k Kind, err error, msg string) *Error {
	return &Error{Kind: k, Message: msg, Err: err}
}

// Invalid is an invalid_request_error listing each bad field.
func Invalid(fields []FieldError) *Error {
	msg := "Invalid request"
	if len(fields) > 0 {
		msg = fields[0].Field + ": " + fields[0].Message
		if fields[0].Field == "" {
			msg = fields[0].Message
		}
		if len(fields) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(fields)-1)
		}
	}
	return &Error{Kind: KindInvalid, Message: msg, Fields: fields}
}

// Sentinel errors that adapters return and features test with errors.Is.
var (
	ErrNotFound    = &Error{Kind: KindNotFound, Message: "Resource not found"}
	ErrConflict    = &Error{Kind: KindConflict, Message: "The resource was changed concurrently; retry"}
	ErrOverloaded  = &Error{Kind: KindOverloaded, Message: "The service is busy; retry shortly"}
	ErrPermission  = &Error{Kind: KindPermission, Message: MsgNoPermission}
	ErrBadKey      = &Error{Kind: KindUnauthenticated, Message: MsgBadCredentials}
	ErrExpiredKey  = &Error{Kind: KindUnauthenticated, Message: MsgKeyExpired}
	ErrRateLimited = &Error{Kind: KindRateLimited, Message: "Rate limit exceeded; retry later"}
)

// Is lets errors.Is match any *Error of the same kind, so errors.Is(err, ErrNotFound) holds for
// every not-found error whatever its message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind
}

// KindOf reports the kind of err; errors without one are internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// MessageOf reports the client-facing message of err's *Error, or "" when it has none.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}
