package engine

import (
	"encoding/json"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/google/go-cmp/cmp"
)

func TestVariables(t *testing.T) {
	g := mustGraph(t, `{"name":"g","agents":[
		{"name":"a","prompt_config":{"system_prompt":"{{variables.zeta}} and {{ variables.alpha }} and {{  variables.zeta}}"}},
		{"name":"b","prompt_config":{"system_prompt":"{{ variables.mid_name }}, not {{ vars.x }} or {{ variables. }}"}},
		{"name":"c"}]}`, nil)
	want := []string{"alpha", "mid_name", "zeta"}
	if diff := cmp.Diff(want, Variables(g)); diff != "" {
		t.Errorf("Variables (-want +got):\n%s", diff)
	}
}

func TestResolvePrompt(t *testing.T) {
	tests := []struct {
		name        string
		prompt      string
		vars        map[string]any
		want        string
		wantMissing []string
	}{
		{"string as is", "Hi {{ variables.name }}!", map[string]any{"name": `Ada "A" <L>`}, `Hi Ada "A" <L>!`, nil},
		{"number", "{{variables.n}}", map[string]any{"n": json.Number("3.50")}, "3.50", nil},
		{"float and bool", "{{variables.f}} {{variables.b}}", map[string]any{"f": 2.0, "b": false}, "2 false", nil},
		{"object and list as JSON", "{{ variables.o }}", map[string]any{"o": map[string]any{"k": []any{1, "x & y"}}}, `{"k":[1,"x & y"]}`, nil},
		{"null", "[{{ variables.z }}]", map[string]any{"z": nil}, "[null]", nil},
		{"missing stay in place", "{{ variables.b }} {{variables.a}} {{ variables.b }}", map[string]any{},
			"{{ variables.b }} {{variables.a}} {{ variables.b }}", []string{"a", "b"}},
		{"no placeholders", "plain {{ other }}", nil, "plain {{ other }}", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, missing := ResolvePrompt(tt.prompt, tt.vars)
			if got != tt.want {
				t.Errorf("prompt = %q, want %q", got, tt.want)
			}
			if diff := cmp.Diff(tt.wantMissing, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConversationTurns(t *testing.T) {
	img := domain.Part{Type: domain.PartImage, Image: &domain.Media{Format: "png", Data: []byte{1}}}
	tests := []struct {
		name    string
		history []Message
		input   []domain.Part
		want    []domain.Turn
	}{
		{"unanswered user message merges with the new one",
			[]Message{{Role: domain.RoleUser, Content: "first"}, {Role: domain.RoleAssistant, Content: ""}, {Role: domain.RoleUser, Content: "second "}},
			[]domain.Part{{Type: domain.PartText, Text: "third"}, img},
			[]domain.Turn{{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartText, Text: "first\n\nsecond\n\nthird"}, img}}}},
		{"other roles are skipped",
			[]Message{{Role: "system", Content: "x"}, {Role: domain.RoleAssistant, Content: "hello"}},
			[]domain.Part{img},
			[]domain.Turn{{Role: domain.RoleAssistant, Parts: userInput("hello")}, {Role: domain.RoleUser, Parts: []domain.Part{img}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := appendTurn(historyTurns(tt.history), domain.Turn{Role: domain.RoleUser, Parts: tt.input})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
		})
	}
}
