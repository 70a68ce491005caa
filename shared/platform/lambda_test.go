package platform_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentorch/agentorch/shared/platform"
)

// TestStageURL sends API Gateway events through HTTPHandler: the stage URL comes from the
// request context API Gateway builds, not from the Host header the client sent.
func TestStageURL(t *testing.T) {
	tests := []struct {
		name, domain, stage, want string
		ok                        bool
	}{
		{"default stage", "a1b2c3d4e5.execute-api.us-east-1.amazonaws.com", "$default", "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com", true},
		{"named stage", "a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com", "prod", "https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/prod", true},
		{"custom domain", "api.example.com", "prod", "https://api.example.com", true},
		{"no domain", "", "$default", "", false},
		{"malformed domain", "evil.example/x?", "$default", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			var ok bool
			h := platform.HTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, ok = platform.StageURL(r.Context())
				w.WriteHeader(http.StatusNoContent)
			}), slog.New(slog.DiscardHandler))
			ev := events.APIGatewayV2HTTPRequest{
				Version: "2.0", RouteKey: "POST /api/v1/images/upload", RawPath: "/api/v1/images/upload/",
				Headers: map[string]string{"host": "evil.example", "x-forwarded-proto": "http", "x-forwarded-host": "evil.example"},
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					DomainName: tt.domain, Stage: tt.stage, RequestID: "r1",
					HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/api/v1/images/upload/"},
				},
			}
			if _, err := h(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			if got != tt.want || ok != tt.ok || strings.Contains(got, "evil") {
				t.Errorf("StageURL = %q %v, want %q %v", got, ok, tt.want, tt.ok)
			}
		})
	}
	if u, ok := platform.StageURL(context.Background()); ok || u != "" {
		t.Errorf("StageURL outside Lambda = %q %v", u, ok)
	}
}

// TestPublicBaseURLConfig: locally the upload URLs default to the dev server; in Lambda they
// default to empty (the stage URL); a malformed value is a configuration error.
func TestPublicBaseURLConfig(t *testing.T) {
	tests := []struct {
		name, lambda, value, want string
		fails                     bool
	}{
		{name: "local default", want: platform.LocalPublicBaseURL},
		{name: "lambda default", lambda: "fn", want: ""},
		{name: "custom domain", lambda: "fn", value: "https://api.example.com/", want: "https://api.example.com"},
		{name: "with a path", value: "https://example.com/agents", want: "https://example.com/agents"},
		{name: "no scheme", value: "api.example.com", fails: true},
		{name: "ftp", value: "ftp://api.example.com", fails: true},
		{name: "query", value: "https://api.example.com/?x=1", fails: true},
		{name: "user info", value: "https://u:p@api.example.com", fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_LAMBDA_FUNCTION_NAME", tt.lambda)
			t.Setenv("PUBLIC_BASE_URL", tt.value)
			t.Setenv("TOKEN_SECRET", "s")
			cfg, err := platform.LoadConfig()
			if tt.fails {
				if err == nil || !strings.Contains(err.Error(), "PUBLIC_BASE_URL") {
					t.Errorf("LoadConfig = %q, %v; want a PUBLIC_BASE_URL error", cfg.PublicBaseURL, err)
				}
				return
			}
			if err != nil || cfg.PublicBaseURL != tt.want {
				t.Errorf("PublicBaseURL = %q, %v; want %q", cfg.PublicBaseURL, err, tt.want)
			}
		})
	}
}
