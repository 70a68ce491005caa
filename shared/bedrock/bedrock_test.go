package bedrock_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/bedrock"
	"github.com/agentorch/agentorch/shared/domain"
)

// reply is one answer of the fake Bedrock Runtime endpoint.
type reply struct {
	status    int
	errorType string // X-Amzn-Errortype of an error reply
	body      string
	drop      bool // the connection closes in the middle of a successful answer, as a reset ends one
}

// recorded is one request the fake endpoint received.
type recorded struct {
	method, path, auth string
	body               []byte
}

// fakeBedrock is an httptest server speaking the Bedrock Runtime REST-JSON protocol: it records
// each request and answers with the replies in order, repeating the last.
type fakeBedrock struct {
	mu       sync.Mutex
	replies  []reply
	requests []recorded
}

func (f *fakeBedrock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, recorded{r.Method, r.URL.EscapedPath(), r.Header.Get("Authorization"), body})
	rep := f.replies[min(n, len(f.replies)-1)]
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if rep.drop {
		w.Header().Set("Content-Length", "4096")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"output":{"message":`)
		_ = http.NewResponseController(w).Flush()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	}
	if rep.errorType != "" {
		w.Header().Set("X-Amzn-Errortype", rep.errorType)
	}
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
}

func (f *fakeBedrock) calls() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

// newClient starts a fake endpoint and returns the real SDK client pointed at it.
func newClient(t *testing.T, replies ...reply) (*bedrockruntime.Client, *fakeBedrock) {
	t.Helper()
	fake := &fakeBedrock{replies: replies}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
	}
	client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
	})
	return client, fake
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

func ptr[T any](v T) *T { return &v }

// wireRequest is the conversation of the request in WIRE-FORMATS.md.
func wireRequest() domain.ModelRequest {
	return domain.ModelRequest{
		System: "You are a support agent.",
		Turns: []domain.Turn{
			{Role: domain.RoleUser, Parts: []domain.Part{
				{Type: domain.PartText, Text: "What is the refund policy?"},
				{Type: domain.PartImage, Image: &domain.Media{Format: "png", Data: []byte("\x89PNG\r\n\x1a\n")}},
			}},
			{Role: domain.RoleAssistant, Parts: []domain.Part{
				{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{ID: "t1", Name: "search_docs", Input: map[string]any{"query": "refunds"}}},
			}},
			{Role: domain.RoleUser, Parts: []domain.Part{
				{Type: domain.PartToolResult, ToolResult: &domain.ToolResult{ToolUseID: "t1", Content: `{"hits":["30-day refunds"]}`}},
			}},
		},
		Tools: []domain.ToolSpec{{
			Name:        "search_docs",
			Description: "Search the support documentation.",
			Schema: map[string]any{
				"type":       "object",
				"properties": map[string]any{"query": map[string]any{"type": "string"}},
				"required":   []any{"query"},
			},
		}},
		MaxTokens:   512,
		Temperature: ptr(0.2),
	}
}

func TestConverseRequest(t *testing.T) {
	tests := []struct {
		name     string
		req      domain.ModelRequest
		wantPath string
		wantBody string
	}{
		{
			name:     "wire format example",
			req:      wireRequest(),
			wantPath: "/model/global.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse",
			wantBody: readFile(t, "converse_request.json"),
		},
		{
			name: "documents, merged user turns, text and error results, schemaless tool",
			req: domain.ModelRequest{
				Model: "amazon.nova-lite-v1:0",
				Turns: []domain.Turn{
					{Role: domain.RoleUser, Parts: []domain.Part{
						{Type: domain.PartText, Text: "Summarise"},
						{Type: domain.PartText, Text: "  "},
						{Type: domain.PartDocument, Document: &domain.Media{Format: "PDF", Name: "Q3 report.final.pdf", Data: []byte("%PDF-1")}},
					}},
					{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartImage, Image: &domain.Media{Format: "jpg", Data: []byte{0xff, 0xd8}}}}},
					{Role: domain.RoleAssistant, Parts: []domain.Part{{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{ID: "a", Name: "ping"}}}},
					{Role: domain.RoleUser, Parts: []domain.Part{
						{Type: domain.PartToolResult, ToolResult: &domain.ToolResult{ToolUseID: "a", Content: "pong"}},
						{Type: domain.PartToolResult, ToolResult: &domain.ToolResult{ToolUseID: "b", Content: "boom", IsError: true}},
					}},
				},
				Tools: []domain.ToolSpec{{Name: "ping"}},
				TopP:  ptr(0.5),
			},
			wantPath: "/model/amazon.nova-lite-v1%3A0/converse",
			wantBody: `{"messages":[
			  {"role":"user","content":[{"text":"Summarise"},
			    {"document":{"format":"pdf","name":"Q3 report-final-pdf","source":{"bytes":"JVBERi0x"}}},
			    {"image":{"format":"jpeg","source":{"bytes":"/9g="}}}]},
			  {"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"ping","input":{}}}]},
			  {"role":"user","content":[
			    {"toolResult":{"toolUseId":"a","status":"success","content":[{"text":"pong"}]}},
			    {"toolResult":{"toolUseId":"b","status":"error","content":[{"text":"boom"}]}}]}],
			 "inferenceConfig":{"topP":0.5},
			 "toolConfig":{"toolChoice":{"auto":{}},"tools":[{"toolSpec":{"name":"ping",
			   "inputSchema":{"json":{"type":"object","properties":{}}}}}]}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, fake := newClient(t, reply{status: 200, body: readFile(t, "converse_response_text.json")})
			if _, err := bedrock.New(client, bedrock.Options{}).Converse(context.Background(), tt.req); err != nil {
				t.Fatalf("Converse: %v", err)
			}
			calls := fake.calls()
			if len(calls) != 1 {
				t.Fatalf("got %d requests, want 1", len(calls))
			}
			got := calls[0]
			if got.method != http.MethodPost || got.path != tt.wantPath {
				t.Errorf("request %s %s, want POST %s", got.method, got.path, tt.wantPath)
			}
			if !strings.HasPrefix(got.auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") {
				t.Errorf("Authorization = %q, want a SigV4 signature", got.auth)
			}
			if diff := cmp.Diff(parseJSON(t, []byte(tt.wantBody)), parseJSON(t, got.body)); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConverseResponse(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *domain.ModelResponse
	}{
		{
			name: "tool use",
			body: readFile(t, "converse_response_tool_use.json"),
			want: &domain.ModelResponse{
				Parts: []domain.Part{
					{Type: domain.PartText, Text: "Let me check the refund policy."},
					{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{
						ID:    "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
						Name:  "search_docs",
						Input: map[string]any{"query": "refund policy", "limit": 3.0, "filters": map[string]any{"lang": []any{"en"}}},
					}},
				},
				StopReason: domain.StopToolUse,
				Usage:      domain.Usage{InputTokens: 412, OutputTokens: 57},
			},
		},
		{
			name: "text",
			body: readFile(t, "converse_response_text.json"),
			want: &domain.ModelResponse{
				Parts:      []domain.Part{{Type: domain.PartText, Text: "Refunds are accepted within 30 days of purchase."}},
				StopReason: domain.StopEndTurn,
				Usage:      domain.Usage{InputTokens: 530, OutputTokens: 14},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, _ := newClient(t, reply{status: 200, body: tt.body})
			var streamed []string
			req := wireRequest()
			req.OnText = func(d string) { streamed = append(streamed, d) }
			got, err := bedrock.New(client, bedrock.Options{}).Converse(context.Background(), req)
			if err != nil {
				t.Fatalf("Converse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{tt.want.Text()}, streamed); diff != "" {
				t.Errorf("OnText deltas (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConverseStopReason(t *testing.T) {
	tests := []struct {
		stop    string
		want    string
		wantErr bool
	}{
		{"end_turn", domain.StopEndTurn, false},
		{"stop_sequence", domain.StopEndTurn, false},
		{"tool_use", domain.StopToolUse, false},
		{"max_tokens", domain.StopMaxTokens, false},
		{"model_context_window_exceeded", domain.StopMaxTokens, false},
		{"guardrail_intervened", domain.StopFiltered, false},
		{"content_filtered", domain.StopFiltered, false},
		{"malformed_tool_use", "", true},
		{"malformed_model_output", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.stop, func(t *testing.T) {
			body := `{"output":{"message":{"role":"assistant","content":[{"text":"x"}]}},"stopReason":"` + tt.stop + `","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}`
			client, _ := newClient(t, reply{status: 200, body: body})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			got, err := bedrock.New(client, bedrock.Options{}).Converse(ctx, wireRequest())
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tt.wantErr)
			}
			if err == nil && got.StopReason != tt.want {
				t.Errorf("StopReason = %q, want %q", got.StopReason, tt.want)
			}
		})
	}
}
