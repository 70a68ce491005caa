package memory_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/bedrock"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/memory"
	"github.com/agentorch/agentorch/shared/openai"
)

// The extraction through the deployment's real model adapters: shared/bedrock on the
// aws-sdk-go-v2 Bedrock Runtime client and shared/openai, each pointed at an httptest server
// speaking its wire format (docs/wire-formats: Converse; chat completions), so that what the
// extraction sends and reads is what goes over the wire, not a domain.ModelRequest handed to a
// scripted model.

// wireCall is one request a fake model endpoint received, read back from its wire format.
type wireCall struct {
	path   string // the request's path (Bedrock names the model in it)
	model  string // the model the request names
	system string // the system prompt
	turns  []string
	roles  []string
	err    string // what could not be read
}

// fakeEndpoint answers every request with the same text, in its wire format, and records what
// it received.
type fakeEndpoint struct {
	mu     sync.Mutex
	answer string
	read   func(r *http.Request, body []byte) wireCall
	write  func(answer string) []byte
	calls  []wireCall
}

func (f *fakeEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.calls = append(f.calls, f.read(r, body))
	answer := f.answer
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(f.write(answer))
}

func (f *fakeEndpoint) received() []wireCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]wireCall(nil), f.calls...)
}

// readConverse reads a Bedrock Converse request: POST /model/{modelId}/converse with the
// system prompt and the messages in the body.
func readConverse(r *http.Request, body []byte) wireCall {
	var in struct {
		System []struct {
			Text string `json:"text"`
		} `json:"system"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	c := wireCall{path: r.Method + " " + r.URL.Path}
	if err := json.Unmarshal(body, &in); err != nil {
		c.err = err.Error() + ": " + string(body)
		return c
	}
	c.model = strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/model/"), "/converse")
	for _, s := range in.System {
		c.system += s.Text
	}
	for _, m := range in.Messages {
		var text string
		for _, p := range m.Content {
			text += p.Text
		}
		c.roles, c.turns = append(c.roles, m.Role), append(c.turns, text)
	}
	return c
}

// writeConverse is a Converse answer of text, as Bedrock sends one (WIRE-FORMATS.md).
func writeConverse(text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"text": text}}}},
		"stopReason": "end_turn",
		"usage":      map[string]any{"inputTokens": 412, "outputTokens": 38, "totalTokens": 450},
		"metrics":    map[string]any{"latencyMs": 820},
	})
	return b
}

// readChat reads a chat completions request: POST /v1/chat/completions with the model and the
// messages (the system prompt first) in the body.
func readChat(r *http.Request, body []byte) wireCall {
	var in struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	c := wireCall{path: r.Method + " " + r.URL.Path}
	if err := json.Unmarshal(body, &in); err != nil {
		c.err = err.Error() + ": " + string(body)
		return c
	}
	c.model = in.Model
	for _, m := range in.Messages {
		if m.Role == "system" {
			c.system += m.Content
			continue
		}
		c.roles, c.turns = append(c.roles, m.Role), append(c.turns, m.Content)
	}
	return c
}

// writeChat is a chat completion of text, as OpenAI sends one (WIRE-FORMATS.md).
func writeChat(text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-C1m3x9Qe", "object": "chat.completion", "created": 1764251000, "model": "gpt-4.1-mini-2025-04-14",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": text, "refusal": nil, "annotations": []any{}}}},
		"usage": map[string]any{"prompt_tokens": 398, "completion_tokens": 31, "total_tokens": 429},
	})
	return b
}

// modelEndpoints are the two fake endpoints and the models over them, by provider name as the
// deployment names them (shared/app/llm).
type modelEndpoints struct {
	bedrock, openai *fakeEndpoint
	models          models
}

// newModelEndpoints starts both fakes and builds the adapters on them: bedrock on the SDK's
// client with static credentials, openai with a key.
func newModelEndpoints(t *testing.T) *modelEndpoints {
	t.Helper()
	e := &modelEndpoints{
		bedrock: &fakeEndpoint{read: readConverse, write: writeConverse},
		openai:  &fakeEndpoint{read: readChat, write: writeChat},
	}
	bs := httptest.NewServer(e.bedrock)
	t.Cleanup(bs.Close)
	client := bedrockruntime.NewFromConfig(aws.Config{Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")},
		func(o *bedrockruntime.Options) { o.BaseEndpoint = aws.String(bs.URL) })
	oa := httptest.NewServer(e.openai)
	t.Cleanup(oa.Close)
	e.models = models{
		"bedrock": bedrock.New(client, bedrock.Options{}),
		"openai":  openai.New(openai.Options{BaseURL: oa.URL + "/v1", APIKey: "sk-test-0123456789abcdef", HTTPClient: oa.Client()}),
	}
	return e
}

// TestProcessJobThroughModelAdapters: an extraction naming bedrock or openai calls that
// provider's endpoint once, with the model the job names, the extraction's system prompt and
// the turn (the user's message and the reply) as the one user message; the facts of a fenced or
// a plain JSON answer become the scope's records, with the job's source, found by the next
// search; a prose answer saves nothing and is no error. No other model is called.
func TestProcessJobThroughModelAdapters(t *testing.T) {
	const (
		claude = "us.anthropic.claude-sonnet-4-5-20250929-v1:0" // neither is its adapter's default model
		gpt    = "gpt-4.1"
	)
	cases := []struct {
		name, provider, model string
		answer                string
		want                  []string
	}{
		{name: "bedrock, a fenced JSON answer", provider: "bedrock", model: claude,
			answer: "```json\n{\n  \"memories\": [\n    \"The user is vegetarian.\",\n    \"The user is travelling to Lisbon in March.\"\n  ]\n}\n```",
			want:   []string{"The user is travelling to Lisbon in March.", "The user is vegetarian."}},
		{name: "openai, a plain JSON answer", provider: "openai", model: gpt,
			answer: `{"memories":["The user is vegetarian.","The user is travelling to Lisbon in March."]}`,
			want:   []string{"The user is travelling to Lisbon in March.", "The user is vegetarian."}},
		{name: "bedrock, a prose answer", provider: "bedrock", model: claude,
			answer: "Nothing in this turn is a durable fact about the user worth remembering.", want: []string{}},
		{name: "openai, a prose answer", provider: "openai", model: gpt,
			answer: "I didn't find any lasting facts about the user in this exchange.", want: []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, nil)
			ctx := ctxOf(t)
			e := newModelEndpoints(t)
			e.models["default"] = h.model // the harness's scripted model: never to be called
			// The harness's service, its Models replaced by the adapters.
			h.svc = memory.New(memory.Deps{Store: h.store, Index: h.index, Embedders: oneEmbedder{&bowEmbedder{}},
				Models: e.models, Queue: h.queue, Now: h.clock.Now})
			called, other := e.bedrock, e.openai
			if c.provider == "openai" {
				called, other = e.openai, e.bedrock
			}
			called.answer = c.answer

			sc := domain.MemoryScope{Company: "acme", UserID: "dana", AgentID: "inline:travel"}
			job := domain.MemoryExtractJob{Scope: sc, SessionID: "s-7", ExecutionID: "x-7", Provider: c.provider, Model: c.model,
				User:  "I'm vegetarian, and I'm off to Lisbon in March. Any restaurant tips?",
				Reply: "Lisbon is easy for vegetarians: try Ao 26 Vegan Food Project in Chiado, and book ahead in March."}
			if err := h.svc.ProcessJob(ctx, jobBody(t, job)); err != nil {
				t.Fatalf("ProcessJob: %v", err)
			}

			calls := called.received()
			if len(calls) != 1 {
				t.Fatalf("%s endpoint called %d times, want once", c.provider, len(calls))
			}
			if n := len(other.received()) + len(h.model.reqs); n != 0 {
				t.Errorf("%d calls to models the job does not name", n)
			}
			got := calls[0]
			if got.err != "" {
				t.Fatalf("request unreadable: %s", got.err)
			}
			wantPath := "POST /v1/chat/completions"
			if c.provider == "bedrock" {
				wantPath = "POST /model/" + c.model + "/converse"
			}
			if got.path != wantPath || got.model != c.model {
				t.Errorf("request %s for model %q, want %s for %q", got.path, got.model, wantPath, c.model)
			}
			if !strings.HasPrefix(got.system, domain.MemoryExtractHeading) || !strings.Contains(got.system, `{"memories"`) {
				t.Errorf("system prompt: %q", got.system)
			}
			if len(got.turns) != 1 || got.roles[0] != "user" || !strings.Contains(got.turns[0], job.User) || !strings.Contains(got.turns[0], job.Reply) {
				t.Errorf("messages %v: %q, want one user message with the user's message and the reply", got.roles, got.turns)
			}

			if d := cmp.Diff(c.want, storedTexts(h, sc)); d != "" {
				t.Errorf("records (-want +got):\n%s", d)
			}
			src := domain.MemorySource{Type: domain.MemorySourceExtraction, ExecutionID: "x-7", SessionID: "s-7"}
			for _, r := range h.store.Records() {
				if r.Source != src {
					t.Errorf("%q: source %+v, want %+v", r.Text, r.Source, src)
				}
			}
			if len(c.want) == 0 {
				return
			}
			hits, _, err := h.svc.Search(ctx, sc, "Is the user vegetarian?", 1)
			must(t, err)
			if d := cmp.Diff([]string{"The user is vegetarian."}, texts(hits)); d != "" {
				t.Errorf("search after the extraction (-want +got):\n%s", d)
			}
		})
	}
}
