package app_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/platform"
)

// TestUploadURLFromStage replays the upload event through the images function as deployed
// without PublicBaseURL: the URL is built on the API Gateway stage of the request context,
// even when the client sent another Host; with PUBLIC_BASE_URL set, on that.
func TestUploadURLFromStage(t *testing.T) {
	env := localstack.NewTestEnv(t)
	log := slog.New(slog.DiscardHandler)
	for _, tt := range []struct{ name, base, want string }{
		{"stage", "", "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com/media/"},
		{"configured", "https://api.example.com", "https://api.example.com/media/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := env.Config
			cfg.PublicBaseURL = tt.base
			a := app.NewWithAWS(env.AWS, cfg, log)
			_, secret, err := a.Auth.CreateKey(t.Context(), auth.NewKey{Owner: "o", Company: "c"})
			if err != nil {
				t.Fatal(err)
			}
			ev := uploadEvent(t, repoRoot(t))
			if ev.RequestContext.DomainName != "a1b2c3d4e5.execute-api.us-east-1.amazonaws.com" || ev.RequestContext.Stage != "$default" {
				t.Fatalf("events/images-upload.json: domainName %q stage %q", ev.RequestContext.DomainName, ev.RequestContext.Stage)
			}
			ev.Headers["x-api-key"] = secret
			ev.Headers["host"] = "evil.example"
			ev.Headers["x-forwarded-host"] = "evil.example"
			g, err := core.Images(a.App)
			if err != nil {
				t.Fatal(err)
			}
			res, err := platform.HTTPHandler(g, log)(t.Context(), ev)
			if err != nil {
				t.Fatal(err)
			}
			var out struct{ URL string }
			if res.StatusCode != http.StatusCreated || json.Unmarshal([]byte(res.Body), &out) != nil || !strings.HasPrefix(out.URL, tt.want) {
				t.Errorf("upload: %d %s, want a url under %s", res.StatusCode, res.Body, tt.want)
			}
		})
	}
}
