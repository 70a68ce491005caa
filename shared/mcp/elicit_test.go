package mcp_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
)

// answering is an elicitor that records the questions and answers each with answer.
type answering struct {
	answer domain.ElicitAnswer
	mu     sync.Mutex
	asked  []domain.Elicitation
}

func (a *answering) Elicit(_ context.Context, q domain.Elicitation) domain.ElicitAnswer {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	return a.answer
}

// TestElicitation: a server's question during a call goes to the call's elicitor (the message
// and the requested schema as the server sent them), and its answer to the server: an accepted
// form with the schema's defaults for the fields it lacks; with no elicitor the question is
// declined.
func TestElicitation(t *testing.T) {
	base := startTestServer(t)
	c := mcp.NewConnector(mcp.Options{Guard: loopback})
	s, err := c.Connect(context.Background(), domain.MCPEndpoint{URL: base + mcptest.PathElicit})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	for _, tt := range []struct {
		name   string
		answer *domain.ElicitAnswer // nil: no elicitor
		want   string
	}{
		{"accepted, defaults applied", &domain.ElicitAnswer{Action: domain.ElicitAccept, Content: map[string]any{"age": 41, "verified": false}},
			`accept {"age":41,"name":"John Doe","verified":false}`},
		{"declined", &domain.ElicitAnswer{Action: domain.ElicitDecline}, "decline"},
		{"cancelled", &domain.ElicitAnswer{Action: domain.ElicitCancel}, "cancel"},
		{"no elicitor", nil, "decline"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			var e *answering
			if tt.answer != nil {
				e = &answering{answer: *tt.answer}
				ctx = domain.WithElicitor(ctx, e)
			}
			res, err := s.CallTool(ctx, "ask", nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || res.Text != tt.want {
				t.Errorf("result %q (error %v), want %q", res.Text, res.IsError, tt.want)
			}
			if e == nil {
				return
			}
			want := []domain.Elicitation{{Message: "Question 1 of 1: who are you?", Schema: mcptest.AskSchema}}
			if diff := cmp.Diff(want, e.asked); diff != "" {
				t.Errorf("questions (-want +got):\n%s", diff)
			}
		})
	}
}
