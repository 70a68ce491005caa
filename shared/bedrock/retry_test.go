package bedrock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/agentorch/agentorch/shared/bedrock"
	"github.com/agentorch/agentorch/shared/domain"
)

func apiError(status int, errorType, message string) reply {
	return reply{status: status, errorType: errorType, body: `{"message":"` + message + `"}`}
}

func TestConverseErrors(t *testing.T) {
	ok := reply{status: 200, body: `{"output":{"message":{"role":"assistant","content":[{"text":"done"}]}},"stopReason":"end_turn","usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4}}`}
	throttled := apiError(429, "ThrottlingException", "Too many requests, please wait before trying again.")
	tests := []struct {
		name       string
		replies    []reply
		maxRetries int
		wantCalls  int
		wantKind   domain.Kind // meaningful when wantErr
		wantErr    bool
		wantMsg    string // substring of the client-safe message
	}{
		{name: "throttled twice then success", replies: []reply{throttled, throttled, ok}, wantCalls: 3},
		{name: "service unavailable then success", replies: []reply{apiError(503, "ServiceUnavailableException", "unavailable"), ok}, wantCalls: 2},
		{name: "a dropped connection then success", replies: []reply{{drop: true}, ok}, wantCalls: 2},
		{name: "model not ready then success", replies: []reply{apiError(429, "ModelNotReadyException", "warming up"), ok}, wantCalls: 2},
		{
			name: "throttled beyond the retries", replies: []reply{throttled}, maxRetries: 2,
			wantCalls: 3, wantErr: true, wantKind: domain.KindOverloaded,
		},
		{
			name: "retries disabled", replies: []reply{throttled}, maxRetries: -1,
			wantCalls: 1, wantErr: true, wantKind: domain.KindOverloaded,
		},
		{
			name:      "validation is invalid and not retried",
			replies:   []reply{apiError(400, "ValidationException", "messages.0.content: blank text")},
			wantCalls: 1, wantErr: true, wantKind: domain.KindInvalid,
			wantMsg: "The model rejected the request: messages.0.content: blank text",
		},
		{
			name:      "access denied is internal and not retried",
			replies:   []reply{apiError(403, "AccessDeniedException", "no access to model")},
			wantCalls: 1, wantErr: true, wantKind: domain.KindInternal,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, fake := newClient(t, tt.replies...)
			m := bedrock.New(client, bedrock.Options{MaxRetries: tt.maxRetries, BaseDelay: time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := m.Converse(ctx, wireRequest())
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
			var api smithy.APIError
			if !errors.As(err, &api) {
				t.Errorf("error %v does not wrap the SDK's API error", err)
			}
			var de *domain.Error
			if tt.wantMsg != "" && (!errors.As(err, &de) || !strings.Contains(de.Message, tt.wantMsg)) {
				t.Errorf("client message of %v does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

// A throttled call retries while the deadline leaves room and then gives up as overloaded.
func TestConverseDeadline(t *testing.T) {
	client, fake := newClient(t, apiError(429, "ThrottlingException", "slow down"))
	m := bedrock.New(client, bedrock.Options{MaxRetries: 100, BaseDelay: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := m.Converse(ctx, wireRequest())
	if k := domain.KindOf(err); k != domain.KindOverloaded {
		t.Fatalf("kind = %v, want overloaded (err %v)", k, err)
	}
	if n := len(fake.calls()); n < 2 || n >= 100 {
		t.Errorf("got %d calls, want a few retries bounded by the deadline", n)
	}
}

// A backoff the deadline leaves no room for is not begun: the call answers overloaded with the
// deadline still ahead. The first backoff is at least 5 s (half the 10 s cap), against a 5 s
// deadline: had Converse slept, it could only have returned with the deadline passed.
func TestConverseGivesUpBeforeTheDeadline(t *testing.T) {
	client, fake := newClient(t, apiError(429, "ThrottlingException", "slow down"))
	m := bedrock.New(client, bedrock.Options{MaxRetries: 100, BaseDelay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := m.Converse(ctx, wireRequest())
	if k := domain.KindOf(err); k != domain.KindOverloaded {
		t.Fatalf("kind = %v, want overloaded (err %v)", k, err)
	}
	if ctx.Err() != nil {
		t.Errorf("returned after the deadline (%v), want an answer before it", ctx.Err())
	}
	if n := len(fake.calls()); n != 1 {
		t.Errorf("got %d calls, want 1", n)
	}
}

func TestConverseInvalidRequest(t *testing.T) {
	tests := []struct {
		name string
		part domain.Part
	}{
		{"image format", domain.Part{Type: domain.PartImage, Image: &domain.Media{Format: "bmp", Data: []byte{1}}}},
		{"document format", domain.Part{Type: domain.PartDocument, Document: &domain.Media{Format: "exe", Data: []byte{1}}}},
		{"part type", domain.Part{Type: "audio"}},
		{"image missing", domain.Part{Type: domain.PartImage}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, fake := newClient(t, reply{status: 500, body: `{}`})
			req := domain.ModelRequest{Turns: []domain.Turn{{Role: domain.RoleUser, Parts: []domain.Part{tt.part}}}}
			_, err := bedrock.New(client, bedrock.Options{}).Converse(context.Background(), req)
			if k := domain.KindOf(err); k != domain.KindInvalid {
				t.Errorf("kind = %v, want invalid (err %v)", k, err)
			}
			if n := len(fake.calls()); n != 0 {
				t.Errorf("got %d calls, want none", n)
			}
		})
	}
}
