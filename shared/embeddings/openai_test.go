package embeddings_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
)

// fakeOpenAI is an OpenAI-compatible POST /v1/embeddings. It answers each input with
// vectorOf(input, dims) (dims: the request's dimensions, else native) scaled by scale, in the
// reverse order of the inputs with their index, as a server may; reply, when set, may answer a
// call (0-based) with an error instead.
type fakeOpenAI struct {
	native int
	scale  float32
	reply  func(call int, w http.ResponseWriter) bool // true: answered
	// noUsage leaves usage out of the answers (some compatible servers do); otherwise
	// prompt_tokens counts the inputs' words.
	noUsage bool

	mu    sync.Mutex
	reqs  []map[string]any
	auth  []string
	times []time.Time
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var raw map[string]any
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	call := len(f.reqs)
	f.reqs = append(f.reqs, raw)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.times = append(f.times, time.Now())
	f.mu.Unlock()
	if f.reply != nil && f.reply(call, w) {
		return
	}
	dims := f.native
	if d, ok := raw["dimensions"].(float64); ok {
		dims = int(d)
	}
	inputs, _ := raw["input"].([]any)
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, 0, len(inputs))
	for i := len(inputs) - 1; i >= 0; i-- {
		v := vectorOf(inputs[i].(string), dims)
		for j := range v {
			v[j] *= f.scale
		}
		data = append(data, item{"embedding", i, v})
	}
	words := 0
	for _, in := range inputs {
		words += len(strings.Fields(in.(string)))
	}
	answer := map[string]any{"object": "list", "data": data, "model": raw["model"],
		"usage": map[string]int{"prompt_tokens": words, "total_tokens": words}}
	if f.noUsage {
		delete(answer, "usage")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

func (f *fakeOpenAI) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.reqs...)
}

func openaiEmbedder(t *testing.T, f *fakeOpenAI, base string, cfg domain.Embedding) embeddings.Embedder {
	t.Helper()
	if f.scale == 0 {
		f.scale = 1
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/embeddings", f)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p, err := embeddings.New(embeddings.Options{
		DefaultProvider: "openai",
		OpenAI:          embeddings.OpenAIOptions{BaseURL: srv.URL + base, APIKey: "sk-test-secret"},
		BaseDelay:       time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Provider = "openai"
	e, err := p.Embedder(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestOpenAIRequestAndOrder(t *testing.T) {
	tests := []struct {
		name     string
		cfg      domain.Embedding
		native   int
		wantDims any // the request's dimensions field; nil when absent
	}{
		{"3-small shortened", domain.Embedding{Dimensions: 512}, 1536, 512.0},
		{"3-small native", domain.Embedding{}, 1536, 1536.0},
		{"ada sends no dimensions", domain.Embedding{Model: "text-embedding-ada-002"}, 1536, nil},
		{"compatible model sends no dimensions", domain.Embedding{Model: "nomic-embed-text", Dimensions: 768}, 768, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeOpenAI{native: tt.native}
			e := openaiEmbedder(t, f, "/v1/", tt.cfg) // a trailing slash on the base URL is fine
			in := texts(5)
			got, err := e.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkVectors(t, in, got, e.Dimensions()) // the server answered in reverse order
			reqs := f.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			want := map[string]any{"model": reqs[0]["model"], "input": toAny(in), "encoding_format": "float"}
			if tt.wantDims != nil {
				want["dimensions"] = tt.wantDims
			}
			if diff := cmp.Diff(want, reqs[0]); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if f.auth[0] != "Bearer sk-test-secret" {
				t.Errorf("Authorization %q", f.auth[0])
			}
		})
	}
}

func toAny(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		a[i] = v
	}
	return a
}

func TestOpenAIBatches(t *testing.T) {
	tests := []struct {
		name  string
		cfg   domain.Embedding
		in    []string
		sizes []int
	}{
		// 2,048 inputs at most per request.
		{"by count", domain.Embedding{Dimensions: 256}, texts(5000), []int{2048, 2048, 904}},
		// The estimated tokens of a request stay within 300,000: 30,000-byte texts are 10,000
		// tokens at most by the estimate, so 30 fit.
		{"by tokens", domain.Embedding{Dimensions: 256}, longTexts(70, 30000), []int{30, 30, 10}},
		// Large vectors: at most 2^20 numbers a response, 341 vectors of 3,072.
		{"by response size", domain.Embedding{Model: "text-embedding-3-large"}, texts(700), []int{341, 341, 18}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeOpenAI{native: 3072}
			e := openaiEmbedder(t, f, "/v1", tt.cfg)
			got, err := e.Embed(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			checkVectors(t, tt.in, got, e.Dimensions())
			var sizes []int
			for _, r := range f.requests() {
				sizes = append(sizes, len(r["input"].([]any)))
			}
			if diff := cmp.Diff(tt.sizes, sizes); diff != "" {
				t.Errorf("batch sizes (-want +got):\n%s", diff)
			}
		})
	}
}

func longTexts(n, size int) []string {
	s := texts(n)
	for i := range s {
		s[i] += strings.Repeat("x", size-len(s[i]))
	}
	return s
}

func TestOpenAINormalises(t *testing.T) {
	f := &fakeOpenAI{native: 768, scale: 12.5}
	e := openaiEmbedder(t, f, "/v1", domain.Embedding{Model: "nomic-embed-text", Dimensions: 768})
	in := texts(3)
	got, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, got, 768) // unit vectors again
}

func TestOpenAIRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		name, header, value string
		wait                time.Duration
	}{
		{"retry-after-ms", "Retry-After-Ms", "300", 300 * time.Millisecond},
		{"retry-after seconds", "Retry-After", "1", time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeOpenAI{native: 1536, reply: func(call int, w http.ResponseWriter) bool {
				if call > 0 {
					return false
				}
				w.Header().Set(tt.header, tt.value)
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`))
				return true
			}}
			e := openaiEmbedder(t, f, "/v1", domain.Embedding{})
			in := texts(2)
			got, err := e.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkVectors(t, in, got, 1536)
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.times) != 2 {
				t.Fatalf("%d requests, want 2", len(f.times))
			}
			if gap := f.times[1].Sub(f.times[0]); gap < tt.wait {
				t.Errorf("retried after %s, the server asked for %s", gap, tt.wait)
			}
		})
	}
}

func TestOpenAIErrors(t *testing.T) {
	answer := func(status int, body string) func(int, http.ResponseWriter) bool {
		return func(_ int, w http.ResponseWriter) bool {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
			return true
		}
	}
	tests := []struct {
		name      string
		cfg       domain.Embedding
		native    int
		reply     func(int, http.ResponseWriter) bool
		wantCalls int
		wantErr   bool
		wantKind  domain.Kind
		wantMsg   string
	}{
		{
			name: "dimension mismatch", cfg: domain.Embedding{Model: "nomic-embed-text", Dimensions: 1024}, native: 768,
			wantCalls: 1, wantErr: true, wantKind: domain.KindInvalid,
			wantMsg: "The embedding model nomic-embed-text returned vectors of 768 dimensions, but embedding_config.dimensions is 1024",
		},
		{
			name: "rejected input", native: 1536,
			reply:     answer(400, `{"error":{"message":"This model's maximum context length is 8192 tokens, however you requested 9000 tokens.","type":"invalid_request_error","code":null}}`),
			wantCalls: 1, wantErr: true, wantKind: domain.KindInvalid,
			wantMsg: "The embedding model rejected the request: This model's maximum context length is 8192 tokens",
		},
		{
			name: "unknown model", cfg: domain.Embedding{Model: "no-such-model", Dimensions: 8}, native: 8,
			reply:     answer(404, `{"error":{"message":"model \"no-such-model\" not found, try pulling it first"}}`),
			wantCalls: 1, wantErr: true, wantKind: domain.KindInvalid,
			wantMsg: `The embedding model rejected the request: model "no-such-model" not found`,
		},
		{
			name: "bad key is internal and not retried", native: 1536,
			reply:     answer(401, `{"error":{"message":"Incorrect API key provided: sk-test-secret.","code":"invalid_api_key"}}`),
			wantCalls: 1, wantErr: true, wantKind: domain.KindInternal,
		},
		{
			name: "quota is not retried", native: 1536,
			reply:     answer(429, `{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}`),
			wantCalls: 1, wantErr: true, wantKind: domain.KindInternal,
		},
		{
			name: "persistent 503 is overloaded after the retries", native: 1536,
			reply:     answer(503, `{"error":{"message":"overloaded"}}`),
			wantCalls: embeddings.DefaultMaxRetries + 1, wantErr: true, wantKind: domain.KindOverloaded,
			wantMsg: "The embedding model is busy; retry shortly",
		},
		{
			name: "server error then success", native: 1536,
			reply: func(call int, w http.ResponseWriter) bool {
				return call == 0 && answer(500, `oops`)(call, w)
			},
			wantCalls: 2, wantErr: false,
		},
		{
			name: "a vector too few", native: 1536,
			reply:     answer(200, `{"data":[{"index":0,"embedding":[1]}]}`),
			wantCalls: 1, wantErr: true, wantKind: domain.KindInternal,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeOpenAI{native: tt.native, reply: tt.reply}
			e := openaiEmbedder(t, f, "/v1", tt.cfg)
			in := texts(2)
			got, err := e.Embed(context.Background(), in)
			if n := len(f.requests()); n != tt.wantCalls {
				t.Errorf("%d requests, want %d", n, tt.wantCalls)
			}
			if !tt.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				checkVectors(t, in, got, e.Dimensions())
				return
			}
			if err == nil {
				t.Fatal("Embed succeeded, want an error")
			}
			if k := domain.KindOf(err); k != tt.wantKind {
				t.Errorf("kind %v, want %v (%v)", k, tt.wantKind, err)
			}
			if strings.Contains(err.Error(), "sk-test-secret") {
				t.Errorf("the API key leaked into the error: %v", err)
			}
			var de *domain.Error
			if tt.wantMsg != "" && (!errors.As(err, &de) || !strings.Contains(de.Message, tt.wantMsg)) {
				t.Errorf("error %v, want a client message containing %q", err, tt.wantMsg)
			}
		})
	}
}

func TestOpenAIEmptyText(t *testing.T) {
	f := &fakeOpenAI{native: 1536}
	e := openaiEmbedder(t, f, "/v1", domain.Embedding{})
	_, err := e.Embed(context.Background(), []string{"", "b"})
	if domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("err %v, want invalid", err)
	}
	if got, err := e.Embed(context.Background(), nil); err != nil || len(got) != 0 {
		t.Errorf("Embed(nil) = %v, %v", got, err)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}
