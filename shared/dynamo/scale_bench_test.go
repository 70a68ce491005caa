package dynamo_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library"
)

// capacityClient sums the read requests, the items they return and the read capacity DynamoDB
// reports for them (ReturnConsumedCapacity TOTAL on every read).
type capacityClient struct {
	dynamo.Client
	mu             sync.Mutex
	reads, items   int
	units          float64
	unitsAvailable bool
}

func (c *capacityClient) note(n int, cc ...types.ConsumedCapacity) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	c.items += n
	for _, x := range cc {
		if x.CapacityUnits != nil {
			c.units += *x.CapacityUnits
			c.unitsAvailable = true
		}
	}
}

func (c *capacityClient) take() (reads, items int, units float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	reads, items, units = c.reads, c.items, c.units
	c.reads, c.items, c.units = 0, 0, 0
	return
}

func (c *capacityClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := c.Client.GetItem(ctx, in, opts...)
	if err == nil {
		n := 0
		if out.Item != nil {
			n = 1
		}
		var cc []types.ConsumedCapacity
		if out.ConsumedCapacity != nil {
			cc = append(cc, *out.ConsumedCapacity)
		}
		c.note(n, cc...)
	}
	return out, err
}

func (c *capacityClient) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := c.Client.Query(ctx, in, opts...)
	if err == nil {
		var cc []types.ConsumedCapacity
		if out.ConsumedCapacity != nil {
			cc = append(cc, *out.ConsumedCapacity)
		}
		c.note(len(out.Items), cc...)
	}
	return out, err
}

func (c *capacityClient) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := c.Client.BatchGetItem(ctx, in, opts...)
	if err == nil {
		n := 0
		for _, items := range out.Responses {
			n += len(items)
		}
		c.note(n, out.ConsumedCapacity...)
	}
	return out, err
}

// scaleIndex answers every search with one hit per file of the query's knowledge bases' files
// it was told about, as OpenSearch would (the index is not what this benchmark measures).
type scaleIndex struct {
	knowledge.Index
	files []string
}

func (x scaleIndex) Search(_ context.Context, _ string, q domain.VectorQuery) ([]domain.Hit, error) {
	var hits []domain.Hit
	for i, id := range x.files {
		if len(hits) < q.TopK {
			hits = append(hits, domain.Hit{KBID: q.KBIDs[0], FileID: id, ChunkIndex: i, Text: "passage", Score: 1 / float64(i+1)})
		}
	}
	return hits, nil
}

type scaleEmbedder struct{}

func (scaleEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0, 0, 0}
	}
	return out, nil
}
func (scaleEmbedder) Dimensions() int        { return 4 }
func (scaleEmbedder) MaxTokens() int         { return 512 }
func (scaleEmbedder) Tokens(text string) int { return len(text) / 4 }
func (scaleEmbedder) Name() string           { return "scale" }

type scaleEmbedders struct{}

func (scaleEmbedders) Resolve(cfg domain.Embedding) (domain.Embedding, []domain.FieldError) {
	return cfg, nil
}
func (scaleEmbedders) Embedder(context.Context, domain.Embedding) (knowledge.Embedder, error) {
	return scaleEmbedder{}, nil
}

// BenchmarkCompanyScale: DynamoDB reads, items read and read capacity units of one list page,
// one search and one retrieval (what an execute with a knowledge base adds) for a company of 10
// and of 10,000 files, with a knowledge base of 10 of them. Read units come from DynamoDB
// Local's ConsumedCapacity.
func BenchmarkCompanyScale(b *testing.B) {
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			env := newScaleEnv(b, n)
			p := domain.Principal{Company: env.company, Owner: "alice", Scopes: []string{domain.ScopeAdmin}}
			ctx := context.Background()
			for _, op := range []struct {
				name string
				run  func() error
			}{
				{"list-files-page", func() error {
					_, _, err := env.svc.ListFiles(ctx, p, library.FileFilter{Limit: 20})
					return err
				}},
				{"list-kbs-page", func() error {
					_, _, err := env.svc.ListKBs(ctx, p, knowledge.KBFilter{Limit: 20})
					return err
				}},
				{"search", func() error {
					_, err := env.svc.Search(ctx, p, env.kb, knowledge.SearchInput{Query: new("returns")})
					return err
				}},
				{"retrieval", func() error {
					_, err := env.svc.SearchKnowledge(ctx, env.company, "returns", []domain.KnowledgeBaseRef{{Name: "kb", ID: env.kb, Enabled: true}}, 0)
					return err
				}},
			} {
				b.Run(op.name, func(b *testing.B) {
					env.client.take()
					for b.Loop() {
						if err := op.run(); err != nil {
							b.Fatal(err)
						}
					}
					reads, items, units := env.client.take()
					b.ReportMetric(float64(reads)/float64(b.N), "reads/op")
					b.ReportMetric(float64(items)/float64(b.N), "items/op")
					if env.client.unitsAvailable {
						b.ReportMetric(units/float64(b.N), "RCU/op")
					}
				})
			}
		})
	}
}

type scaleEnv struct {
	svc     *knowledge.Service
	client  *capacityClient
	company string
	kb      string
}

// newScaleEnv stores n files of a fresh company (8 writers at a time) and a completed
// knowledge base over the first 10.
func newScaleEnv(b *testing.B, n int) *scaleEnv {
	te := localstack.NewTestEnv(b)
	client := &capacityClient{Client: te.DynamoDB()}
	store := dynamo.NewStore(client, te.Config.Table)
	ctx := context.Background()
	company := "scale-" + uuid.NewString()[:8]
	base := time.Now().UTC().Add(-time.Hour)
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				f := newFile(company, base.Add(time.Duration(i)*time.Millisecond))
				ids[i] = f.ID
				if err := store.CreateFile(ctx, f); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	kb := &domain.KnowledgeBase{ID: uuid.NewString(), Company: company, Owner: "alice", Name: "kb", Status: domain.KBCompleted,
		Index: "scale-index", Embedding: domain.Embedding{Provider: "scale", Model: "scale"}, Completed: &now,
		Sources: map[string]*domain.Datasource{}, CreatedAt: now, UpdatedAt: now, StatusChanged: now}
	for _, id := range ids[:10] {
		kb.Sources[id] = &domain.Datasource{FileID: id, Name: "f", Status: domain.IngestIngested, Chunks: 3}
		kb.Files = append(kb.Files, id)
	}
	if err := store.PutKB(ctx, kb); err != nil {
		b.Fatal(err)
	}
	svc := knowledge.New(knowledge.Deps{Store: store, Index: scaleIndex{files: ids[:10]}, Embedders: scaleEmbedders{}}, knowledge.Limits{})
	return &scaleEnv{svc: svc, client: client, company: company, kb: kb.ID}
}
