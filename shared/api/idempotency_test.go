package api_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// ranOnce fails the test unless the session's history holds two messages: one run's question
// and answer.
func (s *stack) ranOnce(key, sid string) {
	s.t.Helper()
	m := s.ok("GET", "/api/v1/runtime/"+sid+"/messages/", key, nil).json(s.t)
	if msgs, _ := m["messages"].([]any); len(msgs) != 2 {
		s.t.Errorf("the session holds %d messages, want 2 (one run)", len(msgs))
	}
}

// TestIdempotencyKeySync: a synchronous execute sent twice with one Idempotency-Key runs once;
// the second answer is the first's result, byte for byte, marked replayed. The key with another
// body is 422, a key of 256 characters 400, and the key of another company is its own.
func TestIdempotencyKeySync(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	path := "/api/v1/runtime/" + sid + "/execute/"
	idem := map[string]string{"Idempotency-Key": "sync-" + uuid.NewString()}
	first := s.do(req{method: "POST", path: path, key: key, body: `{"content":"once"}`, header: idem})
	if first.status != 200 || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %s (replayed %q)", first.status, first.body, first.header.Get("Idempotent-Replayed"))
	}
	again := s.do(req{method: "POST", path: path, key: key, body: `{"content":"once"}`, header: idem})
	if again.status != 200 || !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("again: %d %s (replayed %q), want the first answer replayed", again.status, again.body, again.header.Get("Idempotent-Replayed"))
	}
	s.ranOnce(key, sid)
	other := s.do(req{method: "POST", path: path, key: key, body: `{"content":"something else"}`, header: idem})
	if typ, _ := other.errorType(t); other.status != 422 || typ != "invalid_request_error" {
		t.Errorf("the key with another body: %d %s, want 422 invalid_request_error", other.status, other.body)
	}
	long := s.do(req{method: "POST", path: path, key: key, body: `{"content":"x"}`, header: map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}})
	if long.status != 400 {
		t.Errorf("a key of 256 characters: %d %s, want 400", long.status, long.body)
	}
	// The same text as another company's key runs for it.
	bobKey := s.key("bob", "globex")
	bobSID := s.session(bobKey, flatSession)
	if res := s.do(req{method: "POST", path: "/api/v1/runtime/" + bobSID + "/execute/", key: bobKey, body: `{"content":"once"}`, header: idem}); res.status != 200 || res.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("another company's request with the key: %d (replayed %q), want it run", res.status, res.header.Get("Idempotent-Replayed"))
	}
	// A first request that failed frees its key: the retry runs.
	busy := map[string]string{"Idempotency-Key": "fails-" + uuid.NewString()}
	bad := s.do(req{method: "POST", path: path, key: key, body: `{"content":""}`, header: busy})
	if bad.status != 400 {
		t.Fatalf("an empty content: %d %s, want 400", bad.status, bad.body)
	}
	if res := s.do(req{method: "POST", path: path, key: key, body: `{"content":""}`, header: busy}); res.status != 400 || res.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the failed request again: %d (replayed %q), want it served again", res.status, res.header.Get("Idempotent-Replayed"))
	}
}

// TestIdempotencyKeyAsync: an asynchronous execute sent twice with one key queues one
// execution; the second answer is 202 with the same execution and Location, and once it ran,
// a third shows it completed.
func TestIdempotencyKeyAsync(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	path := "/api/v1/runtime/" + sid + "/execute/?async=true"
	idem := map[string]string{"Idempotency-Key": `"` + uuid.NewString() + `"`} // the draft's quoted form
	first := s.do(req{method: "POST", path: path, key: key, body: `{"content":"later"}`, header: idem})
	if first.status != 202 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	id := first.json(t)["id"]
	again := s.do(req{method: "POST", path: path, key: key, body: `{"content":"later"}`, header: idem})
	if again.status != 202 || again.json(t)["id"] != id || again.header.Get("Location") != first.header.Get("Location") || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("again: %d %s, want the same execution %v", again.status, again.body, id)
	}
	got := s.poll(key, first.header.Get("Location"), 20*time.Second, "queued", "running")
	if got["status"] != "completed" {
		t.Fatalf("the execution: %v", got)
	}
	third := s.do(req{method: "POST", path: path, key: key, body: `{"content":"later"}`, header: idem})
	if v := third.json(t); third.status != 202 || v["id"] != id || v["status"] != "completed" {
		t.Errorf("after it ran: %d %s, want the same execution, completed", third.status, third.body)
	}
	s.ranOnce(key, sid)
}

// TestIdempotencyKeyConcurrent: requests with one key sent at once run once: one is served, the
// others are told it is in progress (409) or given its answer.
func TestIdempotencyKeyConcurrent(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	idem := map[string]string{"Idempotency-Key": "race-" + uuid.NewString()}
	const n = 5
	statuses := make([]int, n)
	replayed := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res := send(t, s.mux, req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: `{"content":"race"}`, header: idem})
			statuses[i], replayed[i] = res.status, res.header.Get("Idempotent-Replayed") == "true"
		})
	}
	wg.Wait()
	served := 0
	for i, st := range statuses {
		switch {
		case st == 200 && !replayed[i]:
			served++
		case st == 200 || st == 409:
		default:
			t.Errorf("request %d: %d, want 200 or 409", i, st)
		}
	}
	if served != 1 {
		t.Errorf("%d requests served (statuses %v), want 1", served, statuses)
	}
	s.ranOnce(key, sid)
}

// TestIdempotencyKeyStream: a streamed execute with a key streams as ever; the same request
// again is not replayed (a stream is not kept) but refused with 409, and runs nothing.
func TestIdempotencyKeyStream(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	h := map[string]string{"Idempotency-Key": "stream-" + uuid.NewString(), "Accept": "text/event-stream"}
	first := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: `{"content":"streamed"}`, header: h})
	if first.status != 200 || !strings.HasPrefix(first.header.Get("Content-Type"), "text/event-stream") || !bytes.Contains(first.body, []byte("event: result")) {
		t.Fatalf("first: %d %s %s", first.status, first.header.Get("Content-Type"), first.body)
	}
	again := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: `{"content":"streamed"}`, header: h})
	if typ, msg := again.errorType(t); again.status != 409 || typ != "conflict_error" || !strings.Contains(msg, "streams are not replayed") {
		t.Errorf("again: %d %s, want 409 saying streams are not replayed", again.status, again.body)
	}
	s.ranOnce(key, sid)
}
