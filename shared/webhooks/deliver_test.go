package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/webhooknpm"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/webhooks"
	"github.com/agentorch/agentorch/shared/webhooks/webhookstest"
)

// endpoint is a receiver that answers the statuses it is given in turn (200 once they run out)
// and keeps every request.
type endpoint struct {
	mu       sync.Mutex
	statuses []int
	got      []*http.Request
	bodies   [][]byte
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	e.got, e.bodies = append(e.got, r), append(e.bodies, b)
	code := http.StatusOK
	if len(e.statuses) > 0 {
		code, e.statuses = e.statuses[0], e.statuses[1:]
	}
	e.mu.Unlock()
	if code == http.StatusFound {
		http.Redirect(w, r, "/elsewhere", code)
		return
	}
	w.WriteHeader(code)
}

type deliveryRig struct {
	svc   *webhooks.Service
	del   *webhooks.Deliverer
	dels  *webhookstest.Deliveries
	queue *webhookstest.Queue
	ep    *endpoint
	url   string
}

func newRig(t *testing.T, statuses ...int) *deliveryRig {
	t.Helper()
	ep := &endpoint{statuses: statuses}
	srv := httptest.NewServer(ep)
	t.Cleanup(srv.Close)
	guard := netguard.Policy{AllowHosts: []string{"127.0.0.1"}} // as make dev allows loopback
	hooks, dels, q := webhookstest.NewStore(), webhookstest.NewDeliveries(), &webhookstest.Queue{}
	return &deliveryRig{svc: webhooks.New(hooks, guard).WithAudit(audit.New(audittest.NewStore())), del: webhooks.NewDeliverer(hooks, dels, q, webhooks.Client(guard)),
		dels: dels, queue: q, ep: ep, url: srv.URL + "/hook"}
}

// drain processes the queue's messages until none is left or rounds run out, as the delivery
// function would, a retryable error leaving the message for the next round.
func (r *deliveryRig) drain(t *testing.T, rounds int) (retries int) {
	t.Helper()
	pending := r.queue.Take()
	for range rounds {
		var again []string
		for _, m := range pending {
			if err := r.del.Process(context.Background(), m); err != nil {
				if !domain.KindOf(err).Retryable() {
					t.Fatalf("not retryable: %v", err)
				}
				retries++
				again = append(again, m)
			}
		}
		pending = append(again, r.queue.Take()...)
		if len(pending) == 0 {
			return retries
		}
	}
	return retries
}

var run = domain.WebhookEvent{Type: domain.EventExecutionCompleted, Company: "acme",
	Data: map[string]string{"session_id": "s-1", "execution_id": "e-1", "status": "completed"}}

// TestDeliveryRetriesThenSucceeds: a failing endpoint is tried again with the same webhook-id
// until it answers 2xx; each attempt is recorded with its status and next retry; the payload is
// {id, type, created_at, data} and the deliveries verify with the official library.
func TestDeliveryRetriesThenSucceeds(t *testing.T) {
	r := newRig(t, 500, 503)
	w := create(t, r.svc, r.url)
	if _, err := r.svc.Create(context.Background(), acme, webhooks.CreateInput{URL: ptr(r.url), Events: ptr([]string{domain.EventExecutionFailed})}); err != nil {
		t.Fatal(err)
	}
	if err := r.del.Publish(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if retries := r.drain(t, 5); retries != 2 {
		t.Errorf("retries = %d, want 2", retries)
	}
	if len(r.ep.got) != 3 {
		t.Fatalf("%d requests, want 3 (the webhook not subscribed to the event gets none)", len(r.ep.got))
	}
	id := r.ep.got[0].Header.Get("webhook-id")
	for i, req := range r.ep.got {
		if req.Header.Get("webhook-id") != id || !strings.HasPrefix(id, "msg_") {
			t.Errorf("attempt %d webhook-id %q, want %q on every attempt", i, req.Header.Get("webhook-id"), id)
		}
	}
	var p struct {
		ID, Type  string
		CreatedAt time.Time `json:"created_at"`
		Data      map[string]string
	}
	if err := json.Unmarshal(r.ep.bodies[2], &p); err != nil || p.Type != "execution.completed" || !strings.HasPrefix(p.ID, "evt_") ||
		p.CreatedAt.IsZero() || p.Data["execution_id"] != "e-1" || len(p.Data) != 3 {
		t.Errorf("payload %s: %+v, %v", r.ep.bodies[2], p, err)
	}
	list, _, err := r.del.Deliveries(context.Background(), acme, w.ID, 0, 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("deliveries: %v, %v", list, err)
	}
	d := list[0]
	if d.ID != id || d.Status != domain.DeliverySucceeded || len(d.Attempts) != 3 {
		t.Fatalf("delivery %+v", d)
	}
	for i, want := range []int{500, 503, 200} {
		a := d.Attempts[i]
		if a.StatusCode != want || (want == 200) != (a.Error == "") || (want == 200) != (a.NextRetryAt == nil) {
			t.Errorf("attempt %d: %+v, want status %d", i, a, want)
		}
	}
	if got := d.Attempts[1].NextRetryAt.Sub(d.Attempts[1].At); got != webhooks.RetryFloor(2) {
		t.Errorf("second attempt's next retry after %s, want %s", got, webhooks.RetryFloor(2))
	}

	root := repoRoot(t)
	if err := webhooknpm.EnsureDeps(context.Background(), root, os.Stderr); errors.Is(err, webhooknpm.ErrNoNPM) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	last := r.ep.got[2]
	h := map[string]string{}
	for _, k := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		h[k] = last.Header.Get(k)
	}
	if _, err := webhooknpm.Verify(context.Background(), root, w.Secret, h, r.ep.bodies[2]); err != nil {
		t.Errorf("the delivery does not verify with standardwebhooks: %v", err)
	}
}

// TestDeliveryGoneDisables: a 410 ends the delivery and turns the webhook off with a reason;
// later events make no delivery to it.
func TestDeliveryGoneDisables(t *testing.T) {
	r := newRig(t, http.StatusGone)
	w := create(t, r.svc, r.url)
	_ = r.del.Publish(context.Background(), run)
	if retries := r.drain(t, 3); retries != 0 {
		t.Errorf("retries = %d, want 0", retries)
	}
	got, _ := r.svc.Get(context.Background(), acme, w.ID)
	if got.Enabled || !strings.Contains(got.DisabledReason, "410") {
		t.Errorf("after a 410: %+v", got)
	}
	_ = r.del.Publish(context.Background(), run)
	r.drain(t, 3)
	if len(r.ep.got) != 1 {
		t.Errorf("%d requests, want 1 (none after the 410)", len(r.ep.got))
	}
}

// TestDeliveryGivesUp: after MaxAttempts failed attempts the delivery is failed and the message
// is not given back again (it would otherwise reach the dead-letter queue); a redirect is an
// attempt that failed, not followed.
func TestDeliveryGivesUp(t *testing.T) {
	statuses := make([]int, webhooks.MaxAttempts)
	for i := range statuses {
		statuses[i] = http.StatusFound
	}
	r := newRig(t, statuses...)
	w := create(t, r.svc, r.url)
	_ = r.del.Publish(context.Background(), run)
	if retries := r.drain(t, 20); retries != webhooks.MaxAttempts-1 {
		t.Errorf("retries = %d, want %d", retries, webhooks.MaxAttempts-1)
	}
	for _, req := range r.ep.got {
		if req.URL.Path != "/hook" {
			t.Errorf("followed a redirect to %s", req.URL.Path)
		}
	}
	list, _, _ := r.del.Deliveries(context.Background(), acme, w.ID, 0, 10)
	d := list[0]
	if d.Status != domain.DeliveryFailed || len(d.Attempts) != webhooks.MaxAttempts || d.Attempts[len(d.Attempts)-1].NextRetryAt != nil ||
		!strings.Contains(d.Attempts[0].Error, "redirect") {
		t.Errorf("delivery %+v", d)
	}
	// Redelivery queues one more attempt with the same id.
	if _, err := r.del.Redeliver(context.Background(), acme, w.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	r.drain(t, 2)
	if n := len(r.ep.got); n != webhooks.MaxAttempts+1 || r.ep.got[n-1].Header.Get("webhook-id") != d.ID {
		t.Errorf("redelivery: %d requests", n)
	}
}

// TestDeliveryGuarded: an endpoint at an address the guard refuses (loopback, with no host
// allowed) is never reached; the attempt records why.
func TestDeliveryGuarded(t *testing.T) {
	r := newRig(t)
	hooks, dels, q := webhookstest.NewStore(), webhookstest.NewDeliveries(), &webhookstest.Queue{}
	open := webhooks.New(hooks, netguard.Policy{AllowHosts: []string{"127.0.0.1"}}).WithAudit(audit.New(audittest.NewStore()))
	w := create(t, open, r.url)
	strict := webhooks.NewDeliverer(hooks, dels, q, webhooks.Client(netguard.Policy{}))
	_ = strict.Publish(context.Background(), run)
	for _, m := range q.Take() {
		_ = strict.Process(context.Background(), m)
	}
	for _, m := range q.Take() {
		if err := strict.Process(context.Background(), m); !domain.KindOf(err).Retryable() {
			t.Errorf("a refused attempt: %v, want a retryable error", err)
		}
	}
	if len(r.ep.got) != 0 {
		t.Errorf("the guarded client reached a loopback endpoint")
	}
	list, _, _ := dels.ListDeliveries(context.Background(), "acme", w.ID, 0, 10)
	if len(list) != 1 || len(list[0].Attempts) != 1 || !strings.Contains(list[0].Attempts[0].Error, "not allowed") {
		t.Errorf("deliveries %+v", list)
	}
}

// TestRetryFloors: at least 8 attempts over about a day before the dead-letter queue.
func TestRetryFloors(t *testing.T) {
	var total time.Duration
	for n := 1; n < webhooks.MaxAttempts; n++ {
		total += webhooks.RetryFloor(n)
	}
	if webhooks.MaxAttempts < 8 || total < 20*time.Hour || total > 32*time.Hour {
		t.Errorf("%d attempts over %s", webhooks.MaxAttempts, total)
	}
}
