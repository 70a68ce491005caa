package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// IdempotencyHeader names the key of a request that must be served once
// (draft-ietf-httpapi-idempotency-key-header).
const IdempotencyHeader = "Idempotency-Key"

// ReplayedHeader marks an answer given again for a key sent before.
const ReplayedHeader = "Idempotent-Replayed"

// Idempotency keeps the answers of requests sent with an Idempotency-Key (sessions.Service on
// the store's records). A group's service that has it honours the header.
type Idempotency interface {
	ClaimKey(ctx context.Context, p domain.Principal, key, fingerprint string) (*domain.IdempotencyRecord, error)
	SettleKey(ctx context.Context, r *domain.IdempotencyRecord) error
	ReleaseKey(ctx context.Context, p domain.Principal, key, fingerprint string) error
}

// replay answers again for a key whose first request was answered as r says.
type replay func(w http.ResponseWriter, r *http.Request, rec *domain.IdempotencyRecord) error

// once serves next at most once for each Idempotency-Key of the caller's company (kept 24 h):
// the first request with a key is served and its answer recorded; a request with the same key
// and the same method, path, query, negotiating headers and body is answered by again (with
// Idempotent-Replayed: true); with another request, 422; while the first is still served, 409.
// A first request that fails (an error envelope) frees its key, so that a retry is served. A
// request without the header is served as ever. It is a no-op for services without
// Idempotency. The key is claimed by one conditional write, so that of concurrent requests with
// one key only one is served.
func once(svc any, scope string, limit int64, next handlerFunc, again replay) handlerFunc {
	keys, ok := svc.(Idempotency)
	if !ok {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		values := r.Header.Values(IdempotencyHeader)
		if len(values) == 0 {
			return next(w, r)
		}
		if err := require(r, scope); err != nil {
			return err
		}
		if len(values) > 1 {
			return domain.Errorf(domain.KindInvalid, "Send one Idempotency-Key header")
		}
		key := values[0]
		if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
			key = key[1 : len(key)-1] // the draft's structured-field string; a bare token is taken too
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			return domain.Wrap(domain.KindInvalid, err, "The request body could not be read")
		}
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		if int64(len(body)) > limit {
			return next(w, r) // too large: refused as it is, with no key claimed
		}
		p, fp := principal(r), fingerprint(r, body)
		rec, err := keys.ClaimKey(r.Context(), p, key, fp)
		if err != nil {
			return err
		}
		if rec != nil {
			w.Header().Set(ReplayedHeader, "true")
			return again(w, r, rec)
		}
		rw := &recorder{ResponseWriter: w}
		if err := next(rw, r); err != nil || rw.status >= 400 || rw.status == 0 {
			_ = keys.ReleaseKey(r.Context(), p, key, fp)
			return err
		}
		done := &domain.IdempotencyRecord{Company: p.Company, Key: key, Fingerprint: fp, Status: rw.status,
			Streamed: rw.streamed}
		if !rw.streamed {
			done.Body = rw.body.Bytes()
		}
		if loc := w.Header().Get("Location"); loc != "" {
			done.SessionID, done.ExecutionID = executionOf(loc)
		}
		_ = keys.SettleKey(r.Context(), done) // not recorded: a retry after KeyStale is served again
		return nil
	}
}

// fingerprint is the digest of what makes two requests the same: the method, path and query,
// the headers that choose the answer's form, and the body.
func fingerprint(r *http.Request, body []byte) string {
	h := sha256.New()
	for _, s := range []string{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Accept"), r.Header.Get("Prefer"), r.Header.Get("Content-Type")} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// executionOf reads the session and execution ids of an execution's Location
// (/api/v1/runtime/{session_id}/executions/{execution_id}/).
func executionOf(loc string) (sessionID, execID string) {
	f := strings.Split(strings.Trim(loc, "/"), "/")
	if len(f) == 6 && f[2] == "runtime" && f[4] == "executions" {
		return f[3], f[5]
	}
	return "", ""
}

// recorder passes an answer through and keeps its status and body (a stream's body is not kept).
type recorder struct {
	http.ResponseWriter
	status   int
	streamed bool
	body     bytes.Buffer
}

func (rw *recorder) WriteHeader(code int) {
	if rw.status == 0 {
		rw.status = code
		rw.streamed = strings.HasPrefix(rw.Header().Get("Content-Type"), "text/event-stream")
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *recorder) Write(b []byte) (int, error) {
	if rw.status == 0 {
		rw.WriteHeader(http.StatusOK)
	}
	if !rw.streamed && rw.body.Len() <= maxReplayBody {
		rw.body.Write(b)
	}
	return rw.ResponseWriter.Write(b)
}

// maxReplayBody bounds the body kept (the feature keeps up to 350 KB; more is not replayed).
const maxReplayBody = 400_000

// Flush passes a stream's flushes through.
func (rw *recorder) Flush() {
	if f, ok := rw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (rw *recorder) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// replayExecute answers again for an execute: an asynchronous one with its execution as it is
// now (202, as first answered, with its Location); a synchronous one with the result it first
// answered (200). A stream is not replayed, nor a result too large to have been kept: 409 says so.
func (h *runtimeHandlers) replayExecute(w http.ResponseWriter, r *http.Request, rec *domain.IdempotencyRecord) error {
	switch {
	case rec.ExecutionID != "":
		sess, e, msgs, err := h.svc.GetExecution(r.Context(), principal(r), rec.SessionID, rec.ExecutionID)
		if err != nil {
			return err
		}
		w.Header().Set("Location", "/api/v1/runtime/"+rec.SessionID+"/executions/"+e.ID+"/")
		writeJSON(w, rec.Status, executionView(e, sess, msgs))
		return nil
	case rec.Streamed:
		return domain.Errorf(domain.KindConflict, "A streamed execute with this Idempotency-Key has already run; streams are not replayed (read its events with GET /api/v1/runtime/{session_id}/events/)")
	case rec.Body == nil:
		return domain.Errorf(domain.KindConflict, "An execute with this Idempotency-Key has already run; its result was too large to keep for a replay (read the session's messages)")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rec.Status)
	_, _ = w.Write(rec.Body)
	return nil
}
