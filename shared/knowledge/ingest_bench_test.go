package knowledge_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/localembed"
)

// BenchmarkUploadToSearchable measures upload → searchable with the real offline embedder, the
// real OpenSearch adapter over the stand-in and the in-memory records, against the bare
// embedder on the same chunks (chunk.DefaultLocal(), batches of 64): the goal is at
// least 0.9 of the bare rate. It reports chunks/s of both and their ratio.
//
//	go test ./shared/knowledge -run '^$' -bench UploadToSearchable -benchtime 1x
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
		files []string
	}{{"1MB", []string{big}}, {"50x8KB", small}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			emb, err := providers.Embedder(ctx, domain.Embedding{Provider: "local"})
			if err != nil {
				b.Fatal(err)
			}
			split, err := chunk.New(chunk.DefaultLocal())
			if err != nil {
				b.Fatal(err)
			}
			var bare, piped time.Duration
			chunks := 0
			for i := 0; i < b.N; i++ {
				// The bare embedder: the same chunks, embedded in batches of 64.
				began := time.Now()
				chunks = 0
				for _, f := range tc.files {
					parts := split.Split(f)
					chunks += len(parts)
					for j := 0; j < len(parts); j += 64 {
						if _, err := emb.Embed(ctx, parts[j:min(j+64, len(parts))]); err != nil {
							b.Fatal(err)
						}
					}
				}
				bare += time.Since(began)

				// The pipeline: upload, create, drain the queue until completed.
				k := newKBService(b, func(d *knowledge.Deps, _ *knowledge.Limits) { d.Embedders = providers })
				began = time.Now()
				var ids []any
				for j, f := range tc.files {
					fv, err := k.Svc.Upload(ctx, alice, knowledge.Upload{Name: fmt.Sprintf("part-%d.txt", j), Data: []byte(f)})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, fv.ID)
				}
				kb := k.createKB(b, alice, "bench", map[string]any{"selected_datasources": ids,
					"embedding_config": map[string]any{"provider": "local"}})
				if errs := k.drain(b); len(errs) > 0 {
					b.Fatalf("ingestion errors: %v", errs)
				}
				piped += time.Since(began)
				got := k.get(b, alice, kb.ID)
				if got.Status != domain.KBCompleted || got.SuccessRate != 100 {
					b.Fatalf("status %s, success rate %d: %+v", got.Status, got.SuccessRate, got.DatasourceErrors)
				}
			}
			bareRate := float64(chunks*b.N) / bare.Seconds()
			pipeRate := float64(chunks*b.N) / piped.Seconds()
			b.ReportMetric(float64(chunks), "chunks")
			b.ReportMetric(bareRate, "bare-chunks/s")
			b.ReportMetric(pipeRate, "pipeline-chunks/s")
			b.ReportMetric(pipeRate/bareRate, "ratio")
		})
	}
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
