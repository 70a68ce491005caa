package localmodel_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/localmodel"
)

// testCase is one entry of testdata/cases.json: a request and the exact response it must get.
type testCase struct {
	Name   string     `json:"name"`
	System string     `json:"system"`
	Tools  []string   `json:"tools"`
	Turns  []caseTurn `json:"turns"`
	Want   struct {
		Parts      []casePart `json:"parts"`
		StopReason string     `json:"stop_reason"`
		Usage      caseUsage  `json:"usage"`
	} `json:"want"`
}

func loadCases(t *testing.T) []testCase {
	t.Helper()
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []testCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatalf("testdata/cases.json: %v", err)
	}
	if len(cases) == 0 {
		t.Fatal("testdata/cases.json holds no cases")
	}
	return cases
}

func TestConverse(t *testing.T) {
	for _, tc := range loadCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			req := domain.ModelRequest{System: tc.System, Turns: turns(tc.Turns)}
			for _, name := range tc.Tools {
				req.Tools = append(req.Tools, domain.ToolSpec{Name: name, Schema: map[string]any{"type": "object"}})
			}
			got, err := localmodel.Model{}.Converse(context.Background(), req)
			if err != nil {
				t.Fatalf("Converse: %v", err)
			}
			want := &domain.ModelResponse{Parts: parts(tc.Want.Parts), StopReason: tc.Want.StopReason, Usage: domain.Usage(tc.Want.Usage)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("response mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConverseOnText(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // the deltas OnText receives
	}{
		{"text reply is handed over whole", "hello", []string{"[local model] You said: hello\nSystem prompt: sys\nhistory=0"}},
		{"tool call has no text", `calc {"x":1}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			req := domain.ModelRequest{
				System: "sys",
				Turns:  []domain.Turn{{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartText, Text: tt.text}}}},
				Tools:  []domain.ToolSpec{{Name: "calc"}},
				OnText: func(d string) { got = append(got, d) },
			}
			resp, err := localmodel.Model{}.Converse(context.Background(), req)
			if err != nil {
				t.Fatalf("Converse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("OnText deltas (-want +got):\n%s", diff)
			}
			if len(got) == 1 && got[0] != resp.Text() {
				t.Errorf("OnText got %q, response text is %q", got[0], resp.Text())
			}
		})
	}
}

func TestConverseCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := localmodel.Model{}.Converse(ctx, domain.ModelRequest{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// The model must satisfy the runtime's interface both as a value and as a pointer.
var (
	_ domain.Model = localmodel.Model{}
	_ domain.Model = (*localmodel.Model)(nil)
)
