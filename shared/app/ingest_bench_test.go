package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/corpus"
	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library"
	"github.com/agentorch/agentorch/shared/vectors"
)

// BenchmarkIngestDevPath measures ingestion the way `make dev` runs it: files uploaded to the S3
// stand-in, records in DynamoDB Local, jobs on the SQS stand-in delivered by the event source
// stand-in to the ingest function's SQS handler (the template's batch size and concurrency), the
// local embedder and the OpenSearch stand-in — from the knowledge base's creation to completed —
// against the bare embedder on the same chunk texts (read back from the index, embedded in
// batches of 64). Corpus: 15 man pages rendered by man(1) and 5 licences of this machine
// (skipped without them). It reports chunks/s of both and their ratio (wall time: DynamoDB
// Local runs in another process).
//
//	go test ./shared/app -run '^$' -bench IngestDevPath -benchtime 1x
func BenchmarkIngestDevPath(b *testing.B) {
	files := corpus.ManPages(b)
	env := localstack.NewTestEnv(b)
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler))
	env.RunEventSources(b, a.Processor)
	k, err := a.Knowledge()
	if err != nil {
		b.Fatal(err)
	}
	providers, err := embeddings.New(embeddings.Options{Local: local.Loader(env.Config.LocalEmbedDir)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	emb, err := providers.Embedder(ctx, domain.Embedding{Provider: "local"})
	if err != nil {
		b.Fatal(err)
	}
	client, err := vectors.NewClient(env.Config.OpenSearchEndpoint, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	store, err := vectors.New(client, vectors.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var bare, piped time.Duration
	pieces := 0
	for i := 0; i < b.N; i++ {
		p := domain.Principal{Company: fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i), Owner: "bench"}
		var ids []*string
		for j, f := range files {
			fv, err := k.Upload(ctx, p, library.Upload{Name: fmt.Sprintf("part-%d.txt", j), Data: []byte(f)})
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, &fv.ID)
		}
		began := time.Now()
		name, provider := "bench", "local"
		kb, err := k.CreateKB(ctx, p, knowledge.KBInput{Name: &name, Datasources: ids,
			Embedding: &knowledge.EmbeddingInput{Provider: &provider}})
		if err != nil {
			b.Fatal(err)
		}
		for {
			got, err := k.GetKB(ctx, p, kb.ID)
			if err != nil {
				b.Fatal(err)
			}
			if got.Status == domain.KBCompleted || got.Status == domain.KBFailed {
				if got.SuccessRate() != 100 {
					for id, d := range got.Sources {
						b.Logf("datasource %s: %s %s", id, d.Status, d.Error)
					}
					b.Fatalf("status %s, success rate %d", got.Status, got.SuccessRate())
				}
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		piped += time.Since(began)

		// The texts the pipeline embedded: every chunk it indexed.
		probe := make([]float32, emb.Dimensions())
		probe[0] = 1
		hits, err := store.Search(ctx, store.IndexName(emb.Name(), emb.Dimensions()), domain.VectorQuery{KBIDs: []string{kb.ID},
			Company: p.Company, Vector: probe, TopK: vectors.MaxTopK})
		if err != nil {
			b.Fatal(err)
		}
		texts := make([]string, len(hits))
		for j, h := range hits {
			texts[j] = h.Text
		}
		pieces = len(texts)
		began = time.Now()
		for j := 0; j < len(texts); j += 64 {
			if _, err := emb.Embed(ctx, texts[j:min(j+64, len(texts))]); err != nil {
				b.Fatal(err)
			}
		}
		bare += time.Since(began)
	}
	bareRate := float64(pieces*b.N) / bare.Seconds()
	pipeRate := float64(pieces*b.N) / piped.Seconds()
	b.ReportMetric(float64(pieces), "chunks")
	b.ReportMetric(bareRate, "bare-chunks/s")
	b.ReportMetric(pipeRate, "pipeline-chunks/s")
	b.ReportMetric(pipeRate/bareRate, "ratio")
}
