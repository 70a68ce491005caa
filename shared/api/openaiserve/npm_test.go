package openaiserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/openainpm"
)

// TestOpenAINodeClient: the official openai npm package (infra/openainpm) runs against the
// stack: a plain completion with history, a streamed one (raw chunks and the SDK's stream
// helper), a tool round trip, the Responses API streamed, an unknown model (NotFoundError,
// model_not_found), a bad key (AuthenticationError) and the models list.
func TestOpenAINodeClient(t *testing.T) {
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := openainpm.EnsureDeps(context.Background(), root, os.Stderr); errors.Is(err, openainpm.ErrNoNPM) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	s := newStack(t)
	key := s.key("alice", "acme")
	s.agent(key, helperAgent)
	s.agent(key, toolsAgent)
	raw, err := openainpm.Run(t.Context(), root, openainpm.Client{BaseURL: s.srv.URL + "/api/v1/openai/v1", APIKey: key, Model: "helper", ToolModel: "tooler"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Plain  struct{ Object, Content, Finish string }
		Stream struct {
			Text, Finish  string
			Chunks, Total int
		}
		Helper    struct{ Content, Finish string }
		Tools     struct{ Finish, Name, Content string }
		Responses struct{ Text, First, Last string }
		// The SDK's error classes and fields.
		UnknownModel, BadKey map[string]any
		Models               []string
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"plain", got.Plain.Object == "chat.completion" && got.Plain.Finish == "stop" && strings.Contains(got.Plain.Content, "You said: Plain from node") && strings.Contains(got.Plain.Content, "history=2")},
		{"stream", got.Stream.Finish == "stop" && strings.Contains(got.Stream.Text, "You said: Streamed from node") && got.Stream.Chunks >= 3 && got.Stream.Total > 0},
		{"helper", got.Helper.Finish == "stop" && strings.Contains(got.Helper.Content, "You said: Helper from node")},
		{"tools", got.Tools.Finish == "tool_calls" && got.Tools.Name == "lookup" && strings.Contains(got.Tools.Content, "Tool result: an otter is a mammal")},
		{"responses", got.Responses.First == "response.created" && got.Responses.Last == "response.completed" && strings.Contains(got.Responses.Text, "You said: Responses from node")},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %s", c.name, raw)
		}
	}
	if diff := cmp.Diff(map[string]any{"class": "NotFoundError", "status": float64(404), "type": "not_found_error", "code": "model_not_found", "param": "model"}, got.UnknownModel); diff != "" {
		t.Errorf("unknown model (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"class": "AuthenticationError", "status": float64(401), "type": "authentication_error", "code": "invalid_api_key", "param": nil}, got.BadKey); diff != "" {
		t.Errorf("bad key (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"helper", "tooler"}, slices.Sorted(slices.Values(got.Models))); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}
