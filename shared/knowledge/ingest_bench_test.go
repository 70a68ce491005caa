package knowledge_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/corpus"
	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library"
	"github.com/agentorch/agentorch/shared/localembed"
)

// BenchmarkUploadToSearchable measures upload → searchable with the real offline embedder, the
// real OpenSearch adapter over the stand-in and the in-memory records (the queue drained in
// process, one job at a time), against the bare embedder on exactly the texts the pipeline
// embedded (recorded on the way, embedded again in batches of 64): the goal is at least
// 0.9 of the bare rate, on prose and on man pages. It reports chunks/s of both and their ratio,
// the splitter's chunks and the pieces embedded (more when chunks over the model's 128 tokens
// were split), the smallest piece in tokens, and the ratio of CPU times (bare over pipeline),
// which other work on the machine does not sway as it sways wall time.
//
//	go test ./shared/knowledge -run '^$' -bench UploadToSearchable -benchtime 1x
//
// Corpora: Persuasion as one 1 MB file and as 50 files of 8 KB; "man": 15 man pages rendered
// by man(1) from /usr/share/man and 5 licences from /usr/share/common-licenses (skipped where
// the machine has no man pages).
func BenchmarkUploadToSearchable(b *testing.B) {
	providers := localProviders(b)
	text := persuasion(b)
	big := strings.Repeat(text, (1<<20)/len(text)+1)[:1<<20]
	// 50 small files: consecutive 8 KB pieces of the book.
	var small []string
	for i := 0; i < 50; i++ {
		small = append(small, text[i*8192:(i+1)*8192])
	}
	for _, tc := range []struct {
		name  string
		files func(testing.TB) []string
	}{
		{"1MB", func(testing.TB) []string { return []string{big} }},
		{"50x8KB", func(testing.TB) []string { return small }},
		{"man", corpus.ManPages},
	} {
		b.Run(tc.name, func(b *testing.B) {
			files := tc.files(b)
			ctx := context.Background()
			emb, err := providers.Embedder(ctx, domain.Embedding{Provider: "local"})
			if err != nil {
				b.Fatal(err)
			}
			var bare, piped, bareCPU, pipedCPU time.Duration
			var texts []string
			chunks := 0
			for i := 0; i < b.N; i++ {
				// The pipeline: upload, create, drain the queue until completed.
				rec := &recordingEmbedders{Embedders: providers}
				k := newKBService(b, func(d *knowledge.Deps, _ *knowledge.Limits) { d.Embedders = rec })
				began, cpu := time.Now(), cpuTime()
				var ids []any
				for j, f := range files {
					fv, err := k.Svc.Upload(ctx, alice, library.Upload{Name: fmt.Sprintf("part-%d.txt", j), Data: []byte(f)})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, fv.ID)
				}
				body := map[string]any{"selected_datasources": ids, "embedding_config": map[string]any{"provider": "local"}}
				if os.Getenv("EVAL_CONTEXTUAL_HEADERS") == "1" { // as kb eval --contextual-headers
					body["chunking_strategy"] = map[string]any{"contextual_headers": true}
				}
				kb := k.createKB(b, alice, "bench", body)
				if errs := k.drain(b); len(errs) > 0 {
					b.Fatalf("ingestion errors: %v", errs)
				}
				piped, pipedCPU = piped+time.Since(began), pipedCPU+cpuTime()-cpu
				got := k.get(b, alice, kb.ID)
				if got.Status != domain.KBCompleted || got.SuccessRate() != 100 {
					b.Fatalf("status %s, success rate %d: %+v", got.Status, got.SuccessRate(), sourceErrors(got))
				}
				texts = rec.texts
				chunks = splitterChunks(b, got.Chunking, emb, files)

				// The bare embedder: the same texts, in batches of 64.
				began, cpu = time.Now(), cpuTime()
				for j := 0; j < len(texts); j += 64 {
					if _, err := emb.Embed(ctx, texts[j:min(j+64, len(texts))]); err != nil {
						b.Fatal(err)
					}
				}
				bare, bareCPU = bare+time.Since(began), bareCPU+cpuTime()-cpu
			}
			least, tiny := -1, 0
			for _, t := range texts {
				n := emb.Tokens(t)
				if least < 0 || n < least {
					least = n
				}
				if n < 10 {
					tiny++
				}
			}
			bareRate := float64(len(texts)*b.N) / bare.Seconds()
			pipeRate := float64(len(texts)*b.N) / piped.Seconds()
			b.ReportMetric(float64(chunks), "chunks")
			b.ReportMetric(float64(len(texts)), "pieces")
			b.ReportMetric(float64(least), "min-piece-tokens")
			b.ReportMetric(float64(tiny), "pieces-under-10-tokens")
			b.ReportMetric(bareRate, "bare-chunks/s")
			b.ReportMetric(pipeRate, "pipeline-chunks/s")
			b.ReportMetric(pipeRate/bareRate, "ratio")
			// CPU time of the process (everything runs in it): the ratio of the work, steady
			// where other processes share the machine and wall time is not.
			b.ReportMetric(bareCPU.Seconds()/pipedCPU.Seconds(), "cpu-ratio")
		})
	}
}

// cpuTime is the CPU time the process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// recordingEmbedders are the real providers with every text embedded for an ingestion recorded.
type recordingEmbedders struct {
	knowledge.Embedders
	mu    sync.Mutex
	texts []string
}

func (r *recordingEmbedders) Embedder(ctx context.Context, cfg domain.Embedding) (knowledge.Embedder, error) {
	e, err := r.Embedders.Embedder(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if c, ok := e.(countingEmbedder); ok {
		return countedRecorder{recordingEmbedder{Embedder: e, r: r}, c}, nil
	}
	return recordingEmbedder{Embedder: e, r: r}, nil
}

type recordingEmbedder struct {
	knowledge.Embedder
	r *recordingEmbedders
}

func (e recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.record(texts)
	return e.Embedder.Embed(ctx, texts)
}

func (e recordingEmbedder) record(texts []string) {
	e.r.mu.Lock()
	e.r.texts = append(e.r.texts, texts...)
	e.r.mu.Unlock()
}

// countingEmbedder is a provider that counts the tokens it embeds (all of shared/embeddings').
type countingEmbedder interface {
	EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error)
}

// countedRecorder records a counting provider's texts and keeps its count, so that ingestion
// embeds through EmbedCounted as it does unrecorded (hiding it made ingestion count every text
// again with Tokens, a cost that only the benchmark paid).
type countedRecorder struct {
	recordingEmbedder
	c countingEmbedder
}

func (e countedRecorder) EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error) {
	e.record(texts)
	return e.c.EmbedCounted(ctx, texts)
}

// splitterChunks is how many chunks the knowledge base's chunking_strategy makes of the files
// (counting the model's tokens where it is measured in them), before any is split to fit.
func splitterChunks(tb testing.TB, c domain.Chunking, emb knowledge.Embedder, files []string) int {
	tb.Helper()
	s, err := chunk.New(c)
	if err != nil {
		tb.Fatal(err)
	}
	s = s.WithTokens(emb.Tokens)
	n := 0
	for _, f := range files {
		n += len(s.Split(f))
	}
	return n
}

// localProviders are the embedding providers with the real local model, its files fetched into
// .cache/models; the benchmark is skipped when they cannot be fetched.
func localProviders(b *testing.B) *embeddings.Providers {
	b.Helper()
	root, err := localstack.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	cache := filepath.Join(root, ".cache", "models")
	if _, err := localembed.EnsureFiles(context.Background(), cache); err != nil {
		b.Skipf("the local model's files cannot be fetched: %v", err)
	}
	providers, err := embeddings.New(embeddings.Options{Local: local.Loader(cache)})
	if err != nil {
		b.Fatal(err)
	}
	return providers
}

// persuasion is the text of Jane Austen's Persuasion the project ships
// (shared/chunk/testdata/persuasion.txt).
func persuasion(tb testing.TB) string {
	tb.Helper()
	root, err := localstack.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "shared", "chunk", "testdata", "persuasion.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	return string(raw)
}
