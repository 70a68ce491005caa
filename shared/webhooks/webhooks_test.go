package webhooks_test

import (
	"context"
	"encoding/base64"
	"errors"
	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/webhooks"
	"github.com/agentorch/agentorch/shared/webhooks/webhookstest"
)

var acme = domain.Principal{KeyID: "k1", Company: "acme"}

func ptr[T any](v T) *T { return &v }

func newService(guard netguard.Policy) (*webhooks.Service, *webhookstest.Store) {
	st := webhookstest.NewStore()
	return webhooks.New(st, guard).WithAudit(audit.New(audittest.NewStore())), st
}

func create(t *testing.T, svc *webhooks.Service, url string) *domain.Webhook {
	t.Helper()
	w, err := svc.Create(context.Background(), acme, webhooks.CreateInput{URL: ptr(url), Events: ptr([]string{domain.EventExecutionCompleted})})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestSecret: whsec_ and the standard base64 of 32 random bytes, new every time.
func TestSecret(t *testing.T) {
	a, b := webhooks.NewSecret(), webhooks.NewSecret()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if !strings.HasPrefix(a, "whsec_") || err != nil || len(key) < 24 || a == b {
		t.Errorf("secrets %q, %q: key %d bytes, %v", a, b, len(key), err)
	}
}

// TestCreateFields: the field errors of a creation, dotted and in order; the URL held to the
// address guard's rules (loopback refused unless the operator allows it).
func TestCreateFields(t *testing.T) {
	for _, tt := range []struct {
		name  string
		in    webhooks.CreateInput
		guard netguard.Policy
		want  []string
	}{
		{"nothing", webhooks.CreateInput{}, netguard.Policy{}, []string{"url", "events"}},
		{"loopback", webhooks.CreateInput{URL: ptr("http://127.0.0.1:9000/hook"), Events: ptr([]string{"execution.failed"})}, netguard.Policy{}, []string{"url"}},
		{"metadata", webhooks.CreateInput{URL: ptr("http://169.254.169.254/"), Events: ptr([]string{"execution.failed"})}, netguard.Policy{}, []string{"url"}},
		{"internal name", webhooks.CreateInput{URL: ptr("http://localhost/x"), Events: ptr([]string{"execution.failed"})}, netguard.Policy{}, []string{"url"}},
		{"ftp", webhooks.CreateInput{URL: ptr("ftp://hooks.example.com/"), Events: ptr([]string{"execution.failed"})}, netguard.Policy{}, []string{"url"}},
		{"relative", webhooks.CreateInput{URL: ptr("/hook"), Events: ptr([]string{"execution.failed"})}, netguard.Policy{}, []string{"url"}},
		{"unknown event", webhooks.CreateInput{URL: ptr("https://hooks.example.com/"), Events: ptr([]string{"execution.failed", "run.done"})}, netguard.Policy{}, []string{"events.1"}},
		{"no events", webhooks.CreateInput{URL: ptr("https://hooks.example.com/"), Events: ptr([]string{})}, netguard.Policy{}, []string{"events"}},
		{"long description", webhooks.CreateInput{URL: ptr("https://hooks.example.com/"), Events: ptr([]string{"execution.failed"}), Description: strings.Repeat("é", 501)}, netguard.Policy{}, []string{"description"}},
		{"allowed loopback", webhooks.CreateInput{URL: ptr("http://127.0.0.1:9000/hook"), Events: ptr([]string{"execution.failed"})}, netguard.Policy{AllowHosts: []string{"127.0.0.1"}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range tt.in.Validate(tt.guard) {
				got = append(got, e.Field)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("fields (-want +got):\n%s", d)
			}
		})
	}
}

// TestCreateAndGet: a created webhook is enabled by default, its events without repeats, and
// reads back with its secret (the API shows it only at creation and rotation).
func TestCreateAndGet(t *testing.T) {
	svc, _ := newService(netguard.Policy{})
	ctx := context.Background()
	w, err := svc.Create(ctx, acme, webhooks.CreateInput{URL: ptr("https://hooks.example.com/in"),
		Events: ptr([]string{"execution.failed", "execution.completed", "execution.failed"}), Description: "CI"})
	if err != nil {
		t.Fatal(err)
	}
	if !w.Enabled || !slices(w.Events, "execution.failed", "execution.completed") || !strings.HasPrefix(w.Secret, "whsec_") {
		t.Errorf("created %+v", w)
	}
	got, err := svc.Get(ctx, acme, w.ID)
	if err != nil || got.Secret != w.Secret {
		t.Errorf("get: %+v, %v", got, err)
	}
	if _, err := svc.Get(ctx, domain.Principal{Company: "globex"}, w.ID); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("another company's: %v", err)
	}
	if _, err := svc.Get(ctx, acme, "not-a-uuid"); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("no uuid: %v", err)
	}
}

func slices(got []string, want ...string) bool { return cmp.Equal(got, want) }

// TestRotate: a rotation gives a new secret and keeps the old one signing for 24 h, then no more.
func TestRotate(t *testing.T) {
	svc, _ := newService(netguard.Policy{})
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	svc.SetClock(func() time.Time { return now })
	w := create(t, svc, "https://hooks.example.com/in")
	r, err := svc.RotateSecret(context.Background(), acme, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Secret == w.Secret || r.PreviousSecret != w.Secret || !r.PreviousUntil.Equal(now.Add(24*time.Hour)) {
		t.Errorf("rotated %+v", r)
	}
	if got := r.Secrets(now.Add(23 * time.Hour)); !slices(got, r.Secret, w.Secret) {
		t.Errorf("secrets within 24 h: %v", got)
	}
	if got := r.Secrets(now.Add(24 * time.Hour)); !slices(got, r.Secret) {
		t.Errorf("secrets after 24 h: %v", got)
	}
}

// TestUpdate: fields left out stay; null url is refused; enabling again clears the reason the
// service disabled it for; a disabled webhook subscribes to nothing.
func TestUpdate(t *testing.T) {
	svc, _ := newService(netguard.Policy{})
	ctx := context.Background()
	w := create(t, svc, "https://hooks.example.com/in")
	if err := svc.Disable(ctx, acme.Company, w.ID, "the endpoint answered 410 Gone"); err != nil {
		t.Fatal(err)
	}
	off, _ := svc.Get(ctx, acme, w.ID)
	if off.Enabled || off.DisabledReason == "" || off.Subscribes(domain.EventExecutionCompleted) {
		t.Errorf("disabled: %+v", off)
	}
	up, err := svc.Update(ctx, acme, w.ID, webhooks.UpdateInput{Enabled: domain.Some(true), Description: domain.Some("again")})
	if err != nil {
		t.Fatal(err)
	}
	if !up.Enabled || up.DisabledReason != "" || up.URL != w.URL || up.Description != "again" || !up.Subscribes(domain.EventExecutionCompleted) {
		t.Errorf("enabled again: %+v", up)
	}
	_, err = svc.Update(ctx, acme, w.ID, webhooks.UpdateInput{URL: domain.Optional[string]{Set: true, Null: true}})
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid || de.Fields[0].Field != "url" {
		t.Errorf("null url: %v", err)
	}
	if err := svc.Delete(ctx, acme, w.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, acme, w.ID); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("second delete: %v", err)
	}
}

// TestLimit: the 21st webhook of a company is a 409 naming the limit.
func TestLimit(t *testing.T) {
	svc, _ := newService(netguard.Policy{})
	for range webhooks.MaxWebhooksPerCompany {
		create(t, svc, "https://hooks.example.com/in")
	}
	_, err := svc.Create(context.Background(), acme, webhooks.CreateInput{URL: ptr("https://hooks.example.com/in"), Events: ptr([]string{"execution.failed"})})
	if domain.KindOf(err) != domain.KindConflict || !strings.Contains(domain.MessageOf(err), "20 webhooks") {
		t.Errorf("over the limit: %v", err)
	}
}
