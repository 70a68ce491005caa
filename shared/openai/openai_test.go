package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/openai"
)

const testKey = "sk-test-0123456789abcdef"

// reply is one answer of the fake chat completions server.
type reply struct {
	status int
	header map[string]string
	body   string
}

// recorded is one request the fake server received.
type recorded struct {
	method, path, auth string
	body               []byte
}

// fakeServer answers POST /v1/chat/completions with the replies in order, repeating the last.
type fakeServer struct {
	mu       sync.Mutex
	replies  []reply
	requests []recorded
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.Header.Get("Authorization"), body})
	rep := f.replies[min(n, len(f.replies)-1)]
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
}

func (f *fakeServer) calls() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

// newModel starts a fake server and returns a Model pointed at it.
func newModel(t *testing.T, opts openai.Options, replies ...reply) (*openai.Model, *fakeServer) {
	t.Helper()
	fake := &fakeServer{replies: replies}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	opts.BaseURL = srv.URL + "/v1/"
	opts.APIKey = testKey
	opts.HTTPClient = srv.Client()
	return openai.New(opts), fake
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parseJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("parse %s: %v", b, err)
	}
	return v
}

func checkRequest(t *testing.T, got recorded, wantBody string) {
	t.Helper()
	if got.method != http.MethodPost || got.path != "/v1/chat/completions" {
		t.Errorf("request %s %s, want POST /v1/chat/completions", got.method, got.path)
	}
	if got.auth != "Bearer "+testKey {
		t.Errorf("Authorization = %q, want the bearer key", got.auth)
	}
	if diff := cmp.Diff(parseJSON(t, []byte(wantBody)), parseJSON(t, got.body)); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }

// The tool call round trip of WIRE-FORMATS.md: the question, the model's tool call, the result
// sent back (the recorded request) and the final answer.
func TestConverseToolRoundTrip(t *testing.T) {
	m, fake := newModel(t, openai.Options{},
		reply{status: 200, body: readFile(t, "chat_response_tool_calls.json")},
		reply{status: 200, body: readFile(t, "chat_response_text.json")})
	req := domain.ModelRequest{
		System:      "You are a support agent.",
		Turns:       []domain.Turn{{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartText, Text: "What is the refund policy?"}}}},
		Tools:       []domain.ToolSpec{{Name: "search_docs", Description: "Search the support documentation.", Schema: map[string]any{"type": "object"}}},
		MaxTokens:   512,
		Temperature: ptr(0.2),
	}
	steps := []struct {
		wantRequest string
		want        *domain.ModelResponse
	}{
		{
			wantRequest: "chat_request_first.json",
			want: &domain.ModelResponse{
				Parts: []domain.Part{{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{
					ID: "call_1", Name: "search_docs", Input: map[string]any{"query": "refunds"},
				}}},
				StopReason: domain.StopToolUse,
				Usage:      domain.Usage{InputTokens: 82, OutputTokens: 17},
			},
		},
		{
			wantRequest: "chat_request.json",
			want: &domain.ModelResponse{
				Parts:      []domain.Part{{Type: domain.PartText, Text: "I found no refund policy in the documentation."}},
				StopReason: domain.StopEndTurn,
				Usage:      domain.Usage{InputTokens: 112, OutputTokens: 10},
			},
		},
	}
	for i, step := range steps {
		var streamed []string
		req.OnText = func(d string) { streamed = append(streamed, d) }
		got, err := m.Converse(context.Background(), req)
		if err != nil {
			t.Fatalf("step %d: Converse: %v", i, err)
		}
		checkRequest(t, fake.calls()[i], readFile(t, step.wantRequest))
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("step %d: response (-want +got):\n%s", i, diff)
		}
		var wantStreamed []string
		if text := step.want.Text(); text != "" {
			wantStreamed = []string{text}
		}
		if diff := cmp.Diff(wantStreamed, streamed); diff != "" {
			t.Errorf("step %d: OnText deltas (-want +got):\n%s", i, diff)
		}
		// Carry the conversation on as the runtime does: the answer, then the tool's result.
		req.Turns = append(req.Turns, domain.Turn{Role: domain.RoleAssistant, Parts: got.Parts})
		for _, p := range got.Parts {
			if p.Type == domain.PartToolUse {
				req.Turns = append(req.Turns, domain.Turn{Role: domain.RoleUser, Parts: []domain.Part{{
					Type: domain.PartToolResult, ToolResult: &domain.ToolResult{ToolUseID: p.ToolUse.ID, Content: `{"hits":[]}`},
				}}})
			}
		}
	}
}

func TestConverseRequestMapping(t *testing.T) {
	tests := []struct {
		name     string
		req      domain.ModelRequest
		wantBody string
	}{
		{
			name: "images, documents and several text parts",
			req: domain.ModelRequest{Model: "llama3.2", Turns: []domain.Turn{{Role: domain.RoleUser, Parts: []domain.Part{
				{Type: domain.PartText, Text: "Compare"},
				{Type: domain.PartImage, Image: &domain.Media{Format: "jpg", Data: []byte{0xff, 0xd8}}},
				{Type: domain.PartDocument, Document: &domain.Media{Format: "pdf", Name: "a.pdf", Data: []byte("%PDF-1")}},
				{Type: domain.PartDocument, Document: &domain.Media{Format: "md", Name: "notes.md", Data: []byte("# Notes")}},
			}}}, TopP: ptr(0.9)},
			wantBody: `{"model":"llama3.2","stream":false,"top_p":0.9,"messages":[{"role":"user","content":[
			  {"type":"text","text":"Compare"},
			  {"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9g="}},
			  {"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0x"}},
			  {"type":"text","text":"Document notes.md:\n# Notes"}]}]}`,
		},
		{
			name: "tool results precede the user's text; errors are marked; text and calls together",
			req: domain.ModelRequest{Turns: []domain.Turn{
				{Role: domain.RoleAssistant, Parts: []domain.Part{
					{Type: domain.PartText, Text: "Checking."},
					{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{ID: "c1", Name: "ping"}},
				}},
				{Role: domain.RoleUser, Parts: []domain.Part{
					{Type: domain.PartText, Text: "and hurry"},
					{Type: domain.PartToolResult, ToolResult: &domain.ToolResult{ToolUseID: "c1", Content: "timeout", IsError: true}},
				}},
			}, Tools: []domain.ToolSpec{{Name: "ping"}}},
			wantBody: `{"model":"gpt-4.1-mini","stream":false,"tool_choice":"auto",
			  "tools":[{"type":"function","function":{"name":"ping","parameters":{"type":"object","properties":{}}}}],
			  "messages":[
			    {"role":"assistant","content":"Checking.","tool_calls":[{"id":"c1","type":"function","function":{"name":"ping","arguments":"{}"}}]},
			    {"role":"tool","tool_call_id":"c1","content":"Error: timeout"},
			    {"role":"user","content":"and hurry"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, fake := newModel(t, openai.Options{}, reply{status: 200, body: readFile(t, "chat_response_text.json")})
			if _, err := m.Converse(context.Background(), tt.req); err != nil {
				t.Fatalf("Converse: %v", err)
			}
			checkRequest(t, fake.calls()[0], tt.wantBody)
		})
	}
}

func TestConverseResponseMapping(t *testing.T) {
	tests := []struct {
		name     string
		choice   string // JSON of choices[0]
		want     []domain.Part
		wantStop string
		wantKind domain.Kind // checked when wantErr
		wantErr  bool
	}{
		{name: "length", choice: `{"message":{"content":"cut"},"finish_reason":"length"}`,
			want: []domain.Part{{Type: domain.PartText, Text: "cut"}}, wantStop: domain.StopMaxTokens},
		{name: "content filter", choice: `{"message":{"content":null},"finish_reason":"content_filter"}`,
			wantStop: domain.StopFiltered},
		{name: "refusal", choice: `{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}`,
			want: []domain.Part{{Type: domain.PartText, Text: "I can't help with that."}}, wantStop: domain.StopFiltered},
		{name: "content as parts", choice: `{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"stop"}`,
			want: []domain.Part{{Type: domain.PartText, Text: "ab"}}, wantStop: domain.StopEndTurn},
		{name: "tool calls reported as stop, arguments as an object", choice: `{"message":{"content":"","tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":{"n":1}}}]},"finish_reason":"stop"}`,
			want: []domain.Part{{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{ID: "x", Name: "f", Input: map[string]any{"n": 1.0}}}}, wantStop: domain.StopToolUse},
		{name: "empty arguments", choice: `{"message":{"tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":"tool_calls"}`,
			want: []domain.Part{{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{ID: "x", Name: "f", Input: map[string]any{}}}}, wantStop: domain.StopToolUse},
		{name: "malformed arguments", choice: `{"message":{"tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{\"n\":"}}]},"finish_reason":"tool_calls"}`,
			wantErr: true, wantKind: domain.KindInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"choices":[` + tt.choice + `],"usage":{"prompt_tokens":5,"completion_tokens":2}}`
			m, _ := newModel(t, openai.Options{}, reply{status: 200, body: body})
			got, err := m.Converse(context.Background(), domain.ModelRequest{})
			if tt.wantErr {
				if err == nil || domain.KindOf(err) != tt.wantKind {
					t.Fatalf("err = %v, want kind %v", err, tt.wantKind)
				}
				return
			}
			if err != nil {
				t.Fatalf("Converse: %v", err)
			}
			want := &domain.ModelResponse{Parts: tt.want, StopReason: tt.wantStop, Usage: domain.Usage{InputTokens: 5, OutputTokens: 2}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}
