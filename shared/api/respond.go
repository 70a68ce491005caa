// Package api is the HTTP layer: one http.Handler per endpoint group on net/http.ServeMux
// patterns, request decoding (JSON or YAML), response encoding and the error envelope.
package api

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/agentorch/agentorch/shared/domain"
)

// errorBody is the error envelope every failure is written in.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Type    string           `json:"type"`
	Message string           `json:"message"`
	Errors  []fieldErrorJSON `json:"errors,omitempty"`
}

// fieldErrorJSON names one invalid field of a request, in an error's errors and in a validation's.
type fieldErrorJSON struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// fieldErrorViews keeps nil apart from empty, as the members that hold them say.
func fieldErrorViews(errs []domain.FieldError) []fieldErrorJSON {
	if errs == nil {
		return nil
	}
	out := make([]fieldErrorJSON, len(errs))
	for i, e := range errs {
		out[i] = fieldErrorJSON(e)
	}
	return out
}

// writeJSON writes v as the JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client went away; nothing left to tell it
}

// ConflictRetryAfter is the Retry-After, in seconds, of every 409 (an agent changed
// concurrently, a session busy with another execution): both are worth retrying shortly.
const ConflictRetryAfter = 1

// writeError writes err in the envelope. Errors without a domain kind become a generic api_error
// and their chain goes to the log with the request id, never to the client.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	de, body := envelope(r, log, err)
	switch de.Kind {
	case domain.KindOverloaded:
		w.Header().Set("Retry-After", "1")
	case domain.KindConflict:
		// A concurrent change or a busy session: worth retrying after a moment.
		w.Header().Set("Retry-After", strconv.Itoa(ConflictRetryAfter))
	}
	writeJSON(w, de.Kind.Status(), body)
}

// envelope is err as the client sees it (also in a stream's failed event), logged as writeError
// logs it.
func envelope(r *http.Request, log *slog.Logger, err error) (*domain.Error, errorBody) {
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind == domain.KindInternal {
		log.ErrorContext(r.Context(), "request failed", "request_id", requestID(r), "method", r.Method, "path", r.URL.Path, "err", err)
		de = &domain.Error{Kind: domain.KindInternal, Message: domain.MsgInternal}
	} else if de.Kind == domain.KindOverloaded {
		log.WarnContext(r.Context(), "overloaded", "request_id", requestID(r), "err", err)
	}
	return de, errorBody{Error: errorDetail{Type: de.Kind.Type(), Message: de.Message, Errors: fieldErrorViews(de.Fields)}}
}
