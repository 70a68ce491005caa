package webhooks_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/webhooks"
)

// pushStore is an in-memory PushStore, the stand-in of dynamo.Store's.
type pushStore map[string]domain.TaskPush

func (s pushStore) key(company, sid, eid, id string) string {
	return company + "/" + sid + "/" + eid + "/" + id
}

func (s pushStore) PutTaskPush(_ context.Context, p *domain.TaskPush) error {
	s[s.key(p.Company, p.SessionID, p.ExecutionID, p.ID)] = *p
	return nil
}

func (s pushStore) GetTaskPush(_ context.Context, company, sid, eid, id string) (*domain.TaskPush, error) {
	p, ok := s[s.key(company, sid, eid, id)]
	if !ok {
		return nil, domain.Errorf(domain.KindNotFound, "push config %s not found", id)
	}
	return &p, nil
}

func (s pushStore) ListTaskPushes(_ context.Context, company, sid, eid string) ([]*domain.TaskPush, error) {
	var out []*domain.TaskPush
	for k, p := range s {
		if strings.HasPrefix(k, s.key(company, sid, eid, "")) {
			out = append(out, &p)
		}
	}
	return out, nil
}

func (s pushStore) DeleteTaskPush(_ context.Context, company, sid, eid, id string) error {
	delete(s, s.key(company, sid, eid, id))
	return nil
}

// TestPushSecretsSealedAtRest: a push config's token and credentials reach the store sealed,
// read back in the clear, are absent from a list, and do not open under another config.
func TestPushSecretsSealedAtRest(t *testing.T) {
	ctx := context.Background()
	raw := pushStore{}
	store := webhooks.SealedPushes(raw, testBox())
	p := &domain.TaskPush{ID: "c1", Company: "acme", SessionID: "s", ExecutionID: "e", URL: "https://a.example/in", Token: "tok-secret", Credentials: "cred-secret"}
	if err := store.PutTaskPush(ctx, p); err != nil {
		t.Fatal(err)
	}
	if p.Token != "tok-secret" {
		t.Errorf("the caller's config changed: %q", p.Token)
	}
	stored := raw[raw.key("acme", "s", "e", "c1")]
	if strings.Contains(stored.Token+stored.Credentials, "secret") || !strings.HasPrefix(stored.Token, "sealed:") || !strings.HasPrefix(stored.Credentials, "sealed:") {
		t.Errorf("stored token %q credentials %q", stored.Token, stored.Credentials)
	}
	got, err := store.GetTaskPush(ctx, "acme", "s", "e", "c1")
	if err != nil || got.Token != "tok-secret" || got.Credentials != "cred-secret" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	list, err := store.ListTaskPushes(ctx, "acme", "s", "e")
	if err != nil || len(list) != 1 || list[0].Token != "" || list[0].Credentials != "" {
		t.Errorf("list = %+v, %v", list, err)
	}
	// The sealed token copied into another config (or company) does not open.
	moved := stored
	moved.ID = "c2"
	raw[raw.key("acme", "s", "e", "c2")] = moved
	if _, err := store.GetTaskPush(ctx, "acme", "s", "e", "c2"); err == nil {
		t.Error("a sealed token moved to another config opened")
	}
}

// TestSetPushHeaders: the token as X-A2A-Notification-Token; Authorization only for the bearer
// scheme (any case) with credentials.
func TestSetPushHeaders(t *testing.T) {
	for _, c := range []struct {
		p           domain.TaskPush
		token, auth string
	}{
		{domain.TaskPush{Token: "t", Schemes: []string{"bearer"}, Credentials: "c"}, "t", "Bearer c"},
		{domain.TaskPush{Schemes: []string{"Basic", "Bearer"}, Credentials: "c"}, "", "Bearer c"},
		{domain.TaskPush{Token: "t", Schemes: []string{"Basic"}, Credentials: "c"}, "t", ""},
		{domain.TaskPush{Token: "t", Schemes: []string{"Bearer"}}, "t", ""},
	} {
		h := http.Header{}
		webhooks.SetPushHeaders(h, &c.p)
		if h.Get("X-A2A-Notification-Token") != c.token || h.Get("Authorization") != c.auth {
			t.Errorf("%+v: headers %v", c.p, h)
		}
	}
}

// taskBody renders a push's body as a2aserve.TaskBodies would, from the config alone.
type taskBody struct{}

func (taskBody) TaskBody(_ context.Context, p *domain.TaskPush) ([]byte, error) {
	return []byte(`{"kind":"task","id":"` + p.SessionID + "." + p.ExecutionID + `"}`), nil
}

// TestPushDelivered: an execution event pushes the task to each config of its execution (none to
// another's), with its token and no Standard Webhooks signature, retrying a failed attempt; the
// company's webhooks get the event as ever; a push-only event reaches no webhook.
func TestPushDelivered(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, http.StatusServiceUnavailable)
	pushes := webhooks.SealedPushes(pushStore{}, testBox())
	r.del = r.del.WithPushes(pushes, taskBody{})
	for _, p := range []*domain.TaskPush{
		{ID: "mine", Company: "acme", SessionID: "s-1", ExecutionID: "e-1", URL: strings.Replace(r.url, "/hook", "/push", 1), Token: "tok"},
		{ID: "other", Company: "acme", SessionID: "s-1", ExecutionID: "e-2", URL: strings.Replace(r.url, "/hook", "/other", 1), Token: "x"},
	} {
		if err := pushes.PutTaskPush(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	create(t, r.svc, r.url)
	if err := r.del.Publish(ctx, run); err != nil {
		t.Fatal(err)
	}
	if retries := r.drain(t, 5); retries != 1 {
		t.Errorf("retries = %d, want 1", retries)
	}
	var pushed, hooked int
	for i, req := range r.ep.got {
		switch req.URL.Path {
		case "/push":
			pushed++
			if req.Header.Get("X-A2A-Notification-Token") != "tok" || req.Header.Get("Webhook-Signature") != "" ||
				string(r.ep.bodies[i]) != `{"kind":"task","id":"s-1.e-1"}` {
				t.Errorf("push %v %s", req.Header, r.ep.bodies[i])
			}
		case "/hook":
			hooked++
		default:
			t.Errorf("request to %s", req.URL.Path)
		}
	}
	if pushed+hooked != 3 || pushed == 0 || hooked == 0 { // the first attempt (either) answered 503
		t.Errorf("pushed %d hooked %d, want one retry among 3 requests", pushed, hooked)
	}

	if err := r.del.Publish(ctx, domain.WebhookEvent{Type: domain.EventTaskPush, Company: "acme", Data: run.Data}); err != nil {
		t.Fatal(err)
	}
	before := len(r.ep.got)
	r.drain(t, 2)
	if n := len(r.ep.got) - before; n != 1 || r.ep.got[before].URL.Path != "/push" {
		t.Errorf("a push-only event made %d requests", n)
	}
}
