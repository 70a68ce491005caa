package openai_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/openai"
)

func errorReply(status int, message, code string, header map[string]string) reply {
	return reply{status: status, header: header, body: fmt.Sprintf(
		`{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":%q}}`, message, code)}
}

var question = domain.ModelRequest{Turns: []domain.Turn{{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartText, Text: "hi"}}}}}

func TestConverseErrors(t *testing.T) {
	ok := reply{status: 200, body: `{"choices":[{"message":{"content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`}
	limited := errorReply(429, "Rate limit reached for requests", "rate_limit_exceeded", map[string]string{"Retry-After": "0"})
	tests := []struct {
		name       string
		replies    []reply
		maxRetries int
		wantCalls  int
		wantErr    bool
		wantKind   domain.Kind
		wantMsg    string // the client-safe message, exactly
	}{
		{name: "rate limited twice then success", replies: []reply{limited, limited, ok}, wantCalls: 3},
		{name: "server errors then success", replies: []reply{{status: 500, body: "oops"}, {status: 502, body: "<html>bad gateway</html>"}, ok}, wantCalls: 3},
		{
			name: "rate limited beyond the retries", replies: []reply{limited}, maxRetries: 2,
			wantCalls: 3, wantErr: true, wantKind: domain.KindOverloaded, wantMsg: "The model is busy; retry shortly",
		},
		{
			name: "server error beyond the retries", replies: []reply{{status: 500, body: "oops"}}, maxRetries: -1,
			wantCalls: 1, wantErr: true, wantKind: domain.KindInternal,
		},
		{
			name:      "exhausted quota is not retried",
			replies:   []reply{errorReply(429, "You exceeded your current quota", "insufficient_quota", nil)},
			wantCalls: 1, wantErr: true, wantKind: domain.KindInternal, wantMsg: "The model provider's quota is exhausted",
		},
		{
			name:      "bad request is invalid, not retried, key redacted",
			replies:   []reply{errorReply(400, "Invalid 'messages[1]' for key "+testKey, "invalid_value", nil)},
			wantCalls: 1, wantErr: true, wantKind: domain.KindInvalid,
			wantMsg: "The model rejected the request: Invalid 'messages[1]' for key [redacted]",
		},
		{
			name:      "bad credentials are the service's fault",
			replies:   []reply{errorReply(401, "Incorrect API key provided: "+testKey, "invalid_api_key", nil)},
			wantCalls: 1, wantErr: true, wantKind: domain.KindInternal,
			wantMsg: "The model provider rejected the service's credentials",
		},
		{
			name:      "long provider messages are bounded",
			replies:   []reply{errorReply(404, strings.Repeat("x", 5000), "model_not_found", nil)},
			wantCalls: 1, wantErr: true, wantKind: domain.KindInvalid,
			wantMsg: "The model rejected the request: " + strings.Repeat("x", 300) + "…",
		},
		{
			name:      "non-JSON client error",
			replies:   []reply{{status: 422, body: "unprocessable"}},
			wantCalls: 1, wantErr: true, wantKind: domain.KindInvalid, wantMsg: "The model rejected the request: HTTP 422",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, fake := newModel(t, openai.Options{MaxRetries: tt.maxRetries, BaseDelay: time.Millisecond}, tt.replies...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := m.Converse(ctx, question)
			if n := len(fake.calls()); n != tt.wantCalls {
				t.Errorf("got %d calls, want %d", n, tt.wantCalls)
			}
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("Converse: %v", err)
				}
				if got.Text() != "done" {
					t.Errorf("text = %q, want %q", got.Text(), "done")
				}
				return
			}
			if err == nil {
				t.Fatal("Converse succeeded, want an error")
			}
			if k := domain.KindOf(err); k != tt.wantKind {
				t.Errorf("kind = %v, want %v (err %v)", k, tt.wantKind, err)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error chain leaks the API key: %v", err)
			}
			var de *domain.Error
			if tt.wantMsg != "" && (!errors.As(err, &de) || de.Message != tt.wantMsg) {
				t.Errorf("client message of %v, want %q", err, tt.wantMsg)
			}
		})
	}
}

func TestConverseRetryAfter(t *testing.T) {
	ok := reply{status: 200, body: `{"choices":[{"message":{"content":"done"},"finish_reason":"stop"}]}`}
	tests := []struct {
		name        string
		header      map[string]string
		deadline    time.Duration
		wantCalls   int
		wantErr     bool
		wantElapsed time.Duration // at least
	}{
		{name: "retry-after-ms is waited for", header: map[string]string{"Retry-After-Ms": "150"}, deadline: 5 * time.Second, wantCalls: 2, wantElapsed: 150 * time.Millisecond},
		{name: "a wait past the deadline gives up at once", header: map[string]string{"Retry-After": "30"}, deadline: time.Second, wantCalls: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limited := errorReply(429, "slow down", "rate_limit_exceeded", tt.header)
			m, fake := newModel(t, openai.Options{BaseDelay: time.Millisecond}, limited, ok)
			ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
			defer cancel()
			start := time.Now()
			_, err := m.Converse(ctx, question)
			elapsed := time.Since(start)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tt.wantErr)
			}
			if tt.wantErr && domain.KindOf(err) != domain.KindOverloaded {
				t.Errorf("kind = %v, want overloaded", domain.KindOf(err))
			}
			if ctx.Err() != nil {
				t.Errorf("returned after the deadline (%v)", ctx.Err())
			}
			if n := len(fake.calls()); n != tt.wantCalls {
				t.Errorf("got %d calls, want %d", n, tt.wantCalls)
			}
			if elapsed < tt.wantElapsed {
				t.Errorf("returned after %v, want at least %v", elapsed, tt.wantElapsed)
			}
		})
	}
}

func TestConverseInvalidRequest(t *testing.T) {
	tests := []struct {
		name string
		turn domain.Turn
	}{
		{"image format", domain.Turn{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartImage, Image: &domain.Media{Format: "tiff"}}}}},
		{"document format", domain.Turn{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartDocument, Document: &domain.Media{Format: "docx"}}}}},
		{"role", domain.Turn{Role: "system", Parts: []domain.Part{{Type: domain.PartText, Text: "x"}}}},
		{"image in an assistant turn", domain.Turn{Role: domain.RoleAssistant, Parts: []domain.Part{{Type: domain.PartImage, Image: &domain.Media{Format: "png"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, fake := newModel(t, openai.Options{}, reply{status: 500})
			_, err := m.Converse(context.Background(), domain.ModelRequest{Turns: []domain.Turn{tt.turn}})
			if k := domain.KindOf(err); k != domain.KindInvalid {
				t.Errorf("kind = %v, want invalid (err %v)", k, err)
			}
			if n := len(fake.calls()); n != 0 {
				t.Errorf("got %d calls, want none", n)
			}
		})
	}
}
