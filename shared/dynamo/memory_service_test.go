package dynamo_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/opensearchlocal"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/memory"
	"github.com/agentorch/agentorch/shared/vectors"
)

// memoryEmbedders gives the local default embedder for every configuration.
type memoryEmbedders struct{ p *embeddings.Providers }

func (m memoryEmbedders) Embedder(ctx context.Context, _ domain.Embedding) (domain.Embedder, error) {
	return m.p.Embedder(ctx, domain.Embedding{})
}

// TestMemoryServiceOnStack runs the memory feature as a deployment composes it, on DynamoDB
// Local, the vectors adapter over the OpenSearch stand-in and the local default embedder: what
// one company's key writes, another company's key can neither read nor delete; a user's memory
// of one agent is not another's; two agents' turns appending to one shared block at once both
// land (the conditional write and the edit's retry); forgetting a user deletes their items and
// vectors and nobody else's.
func TestMemoryServiceOnStack(t *testing.T) {
	env := localstack.NewTestEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	providers, err := embeddings.New(embeddings.Options{Local: local.Loader(env.Config.LocalEmbedDir)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := providers.Embedder(ctx, domain.Embedding{}); err != nil {
		t.Skipf("the local default embedder cannot be loaded: %v", err)
	}
	client, err := vectors.NewClient(opensearchlocal.Serve(t, opensearchlocal.Options{}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := vectors.New(client, vectors.Options{Prefix: "test-mem"})
	if err != nil {
		t.Fatal(err)
	}
	svc := memory.New(memory.Deps{Store: dynamo.NewStore(env.DynamoDB(), env.Config.Table), Index: vs, Embedders: memoryEmbedders{providers}})

	acme, globex := domain.Principal{KeyID: "k-acme", Company: "acme"}, domain.Principal{KeyID: "k-globex", Company: "globex"}
	agentA, agentB := uuid.NewString(), domain.InlineAgentID("support")
	rec, err := svc.CreateRecord(ctx, acme, memory.RecordInput{UserID: ptrTo("alice"), AgentID: &agentA, Text: ptrTo("Alice is allergic to peanuts.")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateRecord(ctx, acme, memory.RecordInput{UserID: ptrTo("bob"), AgentID: &agentA, Text: ptrTo("Bob is allergic to peanuts.")}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateRecord(ctx, globex, memory.RecordInput{UserID: ptrTo("alice"), AgentID: &agentA, Text: ptrTo("Alice is allergic to cats.")}); err != nil {
		t.Fatal(err)
	}

	if _, err := svc.GetRecord(ctx, globex, rec.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's get: %v", err)
	}
	if err := svc.DeleteRecord(ctx, globex, rec.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another company's delete: %v", err)
	}
	search := func(sc domain.MemoryScope) []string {
		t.Helper()
		hits, _, err := svc.Search(ctx, sc, "Which food allergies?", 5)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, h.Record.Text)
		}
		return out
	}
	aliceA := domain.MemoryScope{Company: "acme", UserID: "alice", AgentID: agentA}
	if got := search(aliceA); !slices.Equal(got, []string{"Alice is allergic to peanuts."}) {
		t.Errorf("alice's memory of agent A: %v", got)
	}
	if got := search(domain.MemoryScope{Company: "acme", UserID: "alice", AgentID: agentB}); len(got) != 0 {
		t.Errorf("alice's memory of agent B: %v", got)
	}

	// Two turns append to alice's shared block at once: both land.
	shared := domain.MemoryScope{Company: "acme", UserID: "alice"}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, line := range []string{"Lives in Lyon.", "Keeps bees."} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.EditBlock(ctx, shared, domain.MemoryBlockSpec{Label: "human"}, domain.MemorySource{Type: domain.MemorySourceTool},
				func(old string) (string, error) { return strings.TrimSpace(old + "\n" + line), nil })
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a concurrent append: %v", err)
		}
	}
	bs, err := svc.Blocks(ctx, shared)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || !strings.Contains(bs[0].Value, "Lives in Lyon.") || !strings.Contains(bs[0].Value, "Keeps bees.") {
		t.Errorf("the shared block after two concurrent appends: %+v", bs)
	}

	n, m, err := svc.Forget(ctx, acme, "alice")
	if err != nil || n != 1 || m != 1 {
		t.Errorf("forget alice: %d records, %d blocks, %v; want 1, 1", n, m, err)
	}
	if got := search(aliceA); len(got) != 0 {
		t.Errorf("alice's memory after forget: %v", got)
	}
	if got := search(domain.MemoryScope{Company: "acme", UserID: "bob", AgentID: agentA}); len(got) != 1 {
		t.Errorf("bob's memory after alice was forgotten: %v", got)
	}
	if got := search(domain.MemoryScope{Company: "globex", UserID: "alice", AgentID: agentA}); len(got) != 1 {
		t.Errorf("globex's alice after acme's was forgotten: %v", got)
	}
}

func ptrTo[T any](v T) *T { return &v }
