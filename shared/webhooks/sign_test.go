package webhooks_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/webhooknpm"
	"github.com/agentorch/agentorch/shared/webhooks"
)

// TestSignKnownVector: the signature of the Standard Webhooks specification's published example
// (the vector its libraries test with), computed by Sign.
func TestSignKnownVector(t *testing.T) {
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		body   = `{"test": 2432232314}`
		want   = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	got, err := webhooks.Sign([]string{secret}, id, time.Unix(1614265330, 0), []byte(body))
	if err != nil || got != want {
		t.Errorf("Sign = %q, %v; want %q", got, err, want)
	}
}

// TestSignatureVerifiesWithStandardWebhooks: what SetHeaders writes is accepted by the official
// standardwebhooks npm package (pinned in infra/webhooknpm), under the current secret and, while a
// rotation lasts, under the previous one; a changed body, another secret or a stale timestamp are
// refused by it.
func TestSignatureVerifiesWithStandardWebhooks(t *testing.T) {
	root := repoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := webhooknpm.EnsureDeps(ctx, root, os.Stderr); errors.Is(err, webhooknpm.ErrNoNPM) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	current, previous, other := webhooks.NewSecret(), webhooks.NewSecret(), webhooks.NewSecret()
	body := []byte(`{"id":"evt_1","type":"execution.completed","created_at":"2026-11-27T10:00:00Z","data":{"session_id":"s","execution_id":"e","status":"completed"}}`)
	headers := func(secrets []string, at time.Time, b []byte) map[string]string {
		h := http.Header{}
		if err := webhooks.SetHeaders(h, secrets, "msg_2zCk1", at, b); err != nil {
			t.Fatal(err)
		}
		return map[string]string{"webhook-id": h.Get("webhook-id"), "webhook-timestamp": h.Get("webhook-timestamp"),
			"webhook-signature": h.Get("webhook-signature")}
	}
	now := time.Now()
	rotating := headers([]string{current, previous}, now, body)
	if n := len(strings.Fields(rotating["webhook-signature"])); n != 2 {
		t.Errorf("a rotation's header has %d signatures, want 2: %q", n, rotating["webhook-signature"])
	}
	for _, tc := range []struct {
		name    string
		secret  string
		headers map[string]string
		body    []byte
		ok      bool
	}{
		{"current secret", current, headers([]string{current}, now, body), body, true},
		{"rotation, new secret", current, rotating, body, true},
		{"rotation, previous secret", previous, rotating, body, true},
		{"another secret", other, rotating, body, false},
		{"changed body", current, headers([]string{current}, now, body), append([]byte(" "), body...), false},
		{"ten minutes old", current, headers([]string{current}, now.Add(-10*time.Minute), body), body, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			payload, err := webhooknpm.Verify(ctx, root, tc.secret, tc.headers, tc.body)
			if (err == nil) != tc.ok {
				t.Fatalf("verify: %v, want ok %t", err, tc.ok)
			}
			if tc.ok && !strings.Contains(string(payload), `"execution.completed"`) {
				t.Errorf("payload parsed as %s", payload)
			}
		})
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}
