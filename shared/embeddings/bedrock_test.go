package embeddings_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
)

// fakeBedrock speaks bedrock-runtime's InvokeModel REST protocol (POST /model/{modelId}/invoke,
// errors by X-Amzn-ErrorType) for Titan Text Embeddings. reply, when set, decides each call's
// answer by its 0-based number and the request; nil means success.
type fakeBedrock struct {
	reply func(call int, req titanRequest) *bedrockReply
	// drop, when it says so for a call, closes the connection in the middle of a successful
	// answer, as a reset connection ends one.
	drop  func(call int) bool
	delay time.Duration

	mu       sync.Mutex
	calls    []titanRequest
	models   []string
	inFlight int
	maxIn    int
}

type titanRequest struct {
	InputText  string `json:"inputText"`
	Dimensions *int   `json:"dimensions"`
	Normalize  *bool  `json:"normalize"`
}

type bedrockReply struct {
	status    int
	errorType string
	message   string
}

func (f *fakeBedrock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req titanRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	call := len(f.calls)
	f.calls = append(f.calls, req)
	f.models = append(f.models, r.PathValue("model"))
	f.inFlight++
	f.maxIn = max(f.maxIn, f.inFlight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	time.Sleep(f.delay)

	if f.drop != nil && f.drop(call) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "4096")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"embedding":[0.1,`)
		_ = http.NewResponseController(w).Flush()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	}
	if f.reply != nil {
		if rep := f.reply(call, req); rep != nil {
			w.Header().Set("X-Amzn-ErrorType", rep.errorType)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rep.status)
			_, _ = fmt.Fprintf(w, `{"message":%q}`, rep.message)
			return
		}
	}
	dims, unit := 1536, false // Titan V1: 1,536 dimensions, not normalised
	if req.Dimensions != nil {
		dims, unit = *req.Dimensions, req.Normalize != nil && *req.Normalize
	}
	v := vectorOf(req.InputText, dims)
	if !unit {
		for i := range v {
			v[i] *= 3
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"embedding": v, "inputTextTokenCount": len(strings.Fields(req.InputText))})
}

func (f *fakeBedrock) snapshot() (calls []titanRequest, maxInFlight int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]titanRequest(nil), f.calls...), f.maxIn
}

func (f *fakeBedrock) modelIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.models...)
}

// vectorOf is a unit vector that depends on text, so tests can tell which text a vector is of.
func vectorOf(text string, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	seed := float64(h.Sum64()%1000) / 7
	v := make([]float32, dims)
	var sum float64
	for i := range v {
		x := math.Cos(seed + float64(i)*0.37)
		v[i] = float32(x)
		sum += x * x
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(sum))
	}
	return v
}

// newBedrock returns a real bedrock-runtime client whose endpoint is a fakeBedrock.
func newBedrock(t *testing.T, f *fakeBedrock) (*bedrockruntime.Client, *fakeBedrock) {
	t.Helper()
	if f == nil {
		f = &fakeBedrock{}
	}
	mux := http.NewServeMux()
	mux.Handle("POST /model/{model}/invoke", f)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	return bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) { o.BaseEndpoint = aws.String(srv.URL) }), f
}

func bedrockEmbedder(t *testing.T, f *fakeBedrock, opts embeddings.Options, cfg domain.Embedding) embeddings.Embedder {
	t.Helper()
	client, _ := newBedrock(t, f)
	opts.DefaultProvider, opts.Bedrock = "bedrock", client
	if opts.BaseDelay == 0 {
		opts.BaseDelay = time.Millisecond
	}
	p, err := embeddings.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e, err := p.Embedder(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func texts(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("chunk number %d of the refund policy", i)
	}
	return s
}

func checkVectors(t *testing.T, in []string, got [][]float32, dims int) {
	t.Helper()
	if len(got) != len(in) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(in))
	}
	for i, v := range got {
		want := vectorOf(in[i], dims)
		if len(v) != dims {
			t.Fatalf("vector %d has %d dimensions, want %d", i, len(v), dims)
		}
		for j := range v {
			if math.Abs(float64(v[j]-want[j])) > 1e-5 {
				t.Fatalf("vector %d is not the one of its text (component %d: %v, want %v)", i, j, v[j], want[j])
			}
		}
	}
}

func TestBedrockTitanV2(t *testing.T) {
	f := &fakeBedrock{}
	e := bedrockEmbedder(t, f, embeddings.Options{}, domain.Embedding{Provider: "bedrock", Dimensions: 256})
	in := texts(20)
	got, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, got, 256)
	calls, _ := f.snapshot()
	models := f.modelIDs()
	if len(calls) != len(in) {
		t.Fatalf("%d calls for %d texts, want one each", len(calls), len(in))
	}
	sent := map[string]bool{}
	for i, c := range calls {
		if c.Dimensions == nil || *c.Dimensions != 256 || c.Normalize == nil || !*c.Normalize {
			t.Errorf("call %d: dimensions %v normalize %v, want 256 and true", i, c.Dimensions, c.Normalize)
		}
		if models[i] != "amazon.titan-embed-text-v2:0" {
			t.Errorf("call %d went to model %q", i, models[i])
		}
		sent[c.InputText] = true
	}
	if len(sent) != len(in) {
		t.Errorf("%d distinct texts sent, want %d", len(sent), len(in))
	}
	if e.Dimensions() != 256 || e.MaxTokens() != 8192 || e.Name() != "titan-embed-text-v2" {
		t.Errorf("Dimensions %d MaxTokens %d Name %q", e.Dimensions(), e.MaxTokens(), e.Name())
	}
}

func TestBedrockTitanV1NormalisesAndSendsOnlyText(t *testing.T) {
	f := &fakeBedrock{}
	e := bedrockEmbedder(t, f, embeddings.Options{}, domain.Embedding{Provider: "bedrock", Model: "amazon.titan-embed-text-v1"})
	in := texts(3)
	got, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, got, 1536) // the fake answers 3·unit; the adapter scales back
	calls, _ := f.snapshot()
	for _, c := range calls {
		if c.Dimensions != nil || c.Normalize != nil {
			t.Errorf("Titan V1 got dimensions %v normalize %v, want neither", c.Dimensions, c.Normalize)
		}
	}
}

func TestBedrockConcurrencyBound(t *testing.T) {
	for _, tt := range []struct {
		concurrency, want int
	}{{0, embeddings.DefaultConcurrency}, {3, 3}} {
		t.Run(fmt.Sprint(tt.want), func(t *testing.T) {
			f := &fakeBedrock{delay: 40 * time.Millisecond}
			e := bedrockEmbedder(t, f, embeddings.Options{Concurrency: tt.concurrency}, domain.Embedding{Provider: "bedrock", Dimensions: 256})
			in := texts(4 * tt.want)
			got, err := e.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkVectors(t, in, got, 256)
			if _, maxIn := f.snapshot(); maxIn != tt.want {
				t.Errorf("at most %d calls in flight, want %d", maxIn, tt.want)
			}
		})
	}
}

// TestBedrockRetriesADroppedConnection: a connection reset in the middle of an answer is tried
// again (the SDK's own retryer, which would, is off for these calls), not a failed ingestion.
func TestBedrockRetriesADroppedConnection(t *testing.T) {
	f := &fakeBedrock{drop: func(call int) bool { return call == 0 || call == 2 }}
	e := bedrockEmbedder(t, f, embeddings.Options{Concurrency: 1}, domain.Embedding{Provider: "bedrock", Dimensions: 256})
	in := texts(3)
	got, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, got, 256)
	if calls, _ := f.snapshot(); len(calls) != len(in)+2 {
		t.Errorf("%d calls, want %d (two dropped, tried again)", len(calls), len(in)+2)
	}
}

func TestBedrockErrors(t *testing.T) {
	throttled := &bedrockReply{429, "ThrottlingException", "Too many requests, please wait before trying again."}
	tests := []struct {
		name       string
		reply      func(call int, req titanRequest) *bedrockReply
		maxRetries int
		texts      []string
		wantCalls  int // -1: not checked
		wantKind   domain.Kind
		wantErr    bool
		wantMsg    string
	}{
		{
			name:  "throttled twice then success",
			reply: func(call int, _ titanRequest) *bedrockReply { return map[bool]*bedrockReply{true: throttled}[call < 2] },
			texts: texts(1), wantCalls: 3,
		},
		{
			name: "internal server error then success",
			reply: func(call int, _ titanRequest) *bedrockReply {
				return map[bool]*bedrockReply{true: {500, "InternalServerException", "oops"}}[call == 0]
			},
			texts: texts(1), wantCalls: 2,
		},
		{
			name:  "throttled beyond the retries",
			reply: func(int, titanRequest) *bedrockReply { return throttled }, maxRetries: 2,
			texts: texts(1), wantCalls: 3, wantErr: true, wantKind: domain.KindOverloaded,
			wantMsg: "The embedding model is busy; retry shortly",
		},
		{
			name: "validation is invalid and not retried",
			reply: func(int, titanRequest) *bedrockReply {
				return &bedrockReply{400, "ValidationException", "400 Bad Request: Too many input tokens. Max input tokens: 8192, request input token count: 9000"}
			},
			texts: texts(1), wantCalls: 1, wantErr: true, wantKind: domain.KindInvalid,
			wantMsg: "The embedding model rejected the request: 400 Bad Request: Too many input tokens. Max input tokens: 8192",
		},
		{
			name: "one bad text of many fails the call",
			reply: func(_ int, req titanRequest) *bedrockReply {
				if strings.HasSuffix(req.InputText, " 7 of the refund policy") {
					return &bedrockReply{400, "ValidationException", "Malformed input request"}
				}
				return nil
			},
			texts: texts(30), wantCalls: -1, wantErr: true, wantKind: domain.KindInvalid,
			wantMsg: "Malformed input request",
		},
		{
			name:  "access denied is internal",
			reply: func(int, titanRequest) *bedrockReply { return &bedrockReply{403, "AccessDeniedException", "no access"} },
			texts: texts(1), wantCalls: 1, wantErr: true, wantKind: domain.KindInternal,
		},
		{
			name:  "empty text refused before any call",
			texts: []string{"a", ""}, wantCalls: 0, wantErr: true, wantKind: domain.KindInvalid,
			wantMsg: "Text 1 to embed is empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeBedrock{reply: tt.reply}
			e := bedrockEmbedder(t, f, embeddings.Options{MaxRetries: tt.maxRetries}, domain.Embedding{Provider: "bedrock", Dimensions: 512})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := e.Embed(ctx, tt.texts)
			calls, _ := f.snapshot()
			if tt.wantCalls >= 0 && len(calls) != tt.wantCalls {
				t.Errorf("%d calls, want %d", len(calls), tt.wantCalls)
			}
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("Embed: %v", err)
				}
				checkVectors(t, tt.texts, got, 512)
				return
			}
			if err == nil {
				t.Fatal("Embed succeeded, want an error")
			}
			if k := domain.KindOf(err); k != tt.wantKind {
				t.Errorf("kind %v, want %v (%v)", k, tt.wantKind, err)
			}
			var de *domain.Error
			if tt.wantMsg != "" && (!errors.As(err, &de) || !strings.Contains(de.Message, tt.wantMsg)) {
				t.Errorf("error %v, want a client message containing %q", err, tt.wantMsg)
			}
		})
	}
}

// Throttling or server errors that last past the deadline end as overload, before the deadline.
func TestBedrockGivesUpWithinTheDeadline(t *testing.T) {
	for _, rep := range []bedrockReply{{429, "ThrottlingException", "slow down"}, {500, "InternalServerException", "oops"}} {
		t.Run(rep.errorType, func(t *testing.T) {
			f := &fakeBedrock{reply: func(int, titanRequest) *bedrockReply { return &rep }}
			e := bedrockEmbedder(t, f, embeddings.Options{MaxRetries: 100, BaseDelay: 100 * time.Millisecond}, domain.Embedding{Provider: "bedrock"})
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			_, err := e.Embed(ctx, texts(1))
			if domain.KindOf(err) != domain.KindOverloaded {
				t.Fatalf("err %v, want overloaded", err)
			}
			// It gives up when the next wait would pass the deadline (or, on a slow machine, when
			// the deadline ends a call), not after 100 retries.
			if calls, _ := f.snapshot(); len(calls) < 2 || len(calls) >= 100 {
				t.Errorf("%d calls, want retries before giving up, bounded by the deadline", len(calls))
			}
		})
	}
}

// A backoff the deadline leaves no room for is not begun: Embed answers overloaded with the
// deadline still ahead. The first backoff is at least 5 s (half the 10 s cap), against a 5 s
// deadline: had Embed slept, it could only have returned with the deadline passed.
func TestBedrockGivesUpBeforeTheDeadline(t *testing.T) {
	rep := bedrockReply{429, "ThrottlingException", "slow down"}
	f := &fakeBedrock{reply: func(int, titanRequest) *bedrockReply { return &rep }}
	e := bedrockEmbedder(t, f, embeddings.Options{MaxRetries: 100, BaseDelay: time.Hour}, domain.Embedding{Provider: "bedrock"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := e.Embed(ctx, texts(1))
	if domain.KindOf(err) != domain.KindOverloaded {
		t.Fatalf("err %v, want overloaded", err)
	}
	if ctx.Err() != nil {
		t.Errorf("returned after the deadline (%v), want an answer before it", ctx.Err())
	}
	if calls, _ := f.snapshot(); len(calls) != 1 {
		t.Errorf("%d calls, want 1", len(calls))
	}
}

func TestBedrockEmptyInput(t *testing.T) {
	f := &fakeBedrock{}
	e := bedrockEmbedder(t, f, embeddings.Options{}, domain.Embedding{Provider: "bedrock"})
	got, err := e.Embed(context.Background(), nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("Embed(nil) = %v, %v", got, err)
	}
	if calls, _ := f.snapshot(); len(calls) != 0 {
		t.Errorf("%d calls for no text", len(calls))
	}
}

func TestBedrockDeadlineDuringARetryIsOverload(t *testing.T) {
	f := &fakeBedrock{reply: func(call int, _ titanRequest) *bedrockReply {
		if call == 0 {
			return &bedrockReply{429, "ThrottlingException", "slow down"}
		}
		time.Sleep(500 * time.Millisecond) // the retry outlasts the caller's deadline
		return nil
	}}
	e := bedrockEmbedder(t, f, embeddings.Options{BaseDelay: 10 * time.Millisecond}, domain.Embedding{Provider: "bedrock"})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := e.Embed(ctx, texts(1)); domain.KindOf(err) != domain.KindOverloaded {
		t.Fatalf("err %v, want overloaded", err)
	}
	// Without a throttled attempt before it, a deadline is the call's timeout, not overload.
	slow := &fakeBedrock{delay: 300 * time.Millisecond}
	e = bedrockEmbedder(t, slow, embeddings.Options{BaseDelay: 10 * time.Millisecond}, domain.Embedding{Provider: "bedrock"})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	_, err := e.Embed(ctx2, texts(1))
	if !errors.Is(err, context.DeadlineExceeded) || domain.KindOf(err) != domain.KindInternal {
		t.Fatalf("err %v, want the deadline", err)
	}
}
