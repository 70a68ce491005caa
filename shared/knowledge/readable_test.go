package knowledge_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library"
	"github.com/agentorch/agentorch/shared/localembed"
)

// laidOut is a file as files are: headings, blank lines, tab and space indentation, CRLF.
const laidOut = "Section 2. Grant of Copyright License.\n\n" +
	"\tSubject to the terms and conditions of this License, each Contributor\n" +
	"\thereby grants to You a perpetual, worldwide, non-exclusive, no-charge,\n" +
	"\troyalty-free, irrevocable copyright license to reproduce, prepare\n" +
	"\tDerivative Works of, publicly display, publicly perform, sublicense,\n" +
	"\tand distribute the Work and such Derivative Works in Source or Object form.\r\n\r\n" +
	"Section 3. Grant of Patent License.\n\n" +
	"    Subject to the terms and conditions of this License, each Contributor\n" +
	"    hereby grants to You a perpetual, worldwide, non-exclusive, no-charge,\n" +
	"    royalty-free, irrevocable patent license to make, have made, use,\n" +
	"    offer to sell, sell, import, and otherwise transfer the Work.\n"

// TestLocalKBEmbedsReadableKeepsText: through ingestion and search with the real local
// embedder, a chunk is stored with its own text (line breaks and tabs kept) and with the vector
// of that text with its whitespace collapsed, as the model gives it; a query with tabs and line
// breaks finds what its collapsed form finds, with the same scores.
func TestLocalKBEmbedsReadableKeepsText(t *testing.T) {
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	files, err := localembed.EnsureFiles(ctx, filepath.Join(root, ".cache", "models"))
	if err != nil {
		t.Skipf("the local model's files cannot be fetched: %v", err)
	}
	providers, err := embeddings.New(embeddings.Options{Local: local.Loader(filepath.Dir(files))})
	if err != nil {
		t.Fatal(err)
	}
	m, err := localembed.Load(files)
	if err != nil {
		t.Fatal(err)
	}

	k := newKBService(t, func(d *knowledge.Deps, _ *knowledge.Limits) { d.Embedders = providers })
	fv, err := k.Svc.Upload(ctx, alice, library.Upload{Name: "licence.txt", Data: []byte(laidOut)})
	if err != nil {
		t.Fatal(err)
	}
	kb := k.createKB(t, alice, "laid-out", map[string]any{"selected_datasources": []any{fv.ID},
		"embedding_config": map[string]any{"provider": "local", "model": "use-lite"}})
	if errs := k.drain(t); len(errs) > 0 {
		t.Fatalf("ingestion errors: %v", errs)
	}
	stored := k.Index.Stored()
	if len(stored) == 0 {
		t.Fatal("nothing was indexed")
	}
	laid := 0
	for _, c := range stored {
		if !strings.Contains(laidOut, c.Text) {
			t.Errorf("chunk %d is not the file's own text: %q", c.ChunkIndex, c.Text)
		}
		if strings.ContainsAny(c.Text, "\t\n") {
			laid++
		}
		want, err := m.Embed(ctx, []string{strings.Join(strings.Fields(c.Text), " ")})
		if err != nil {
			t.Fatal(err)
		}
		if cos := dot32(c.Vector, want[0]); cos < 0.9999 {
			t.Errorf("chunk %d: cosine %.6f to its collapsed text's vector, want ≥ 0.9999", c.ChunkIndex, cos)
		}
	}
	if laid == 0 {
		t.Fatal("no chunk kept a tab or a line break: the case tests nothing")
	}

	search := func(q string) []domain.Hit {
		hits, err := k.Svc.Search(ctx, alice, kb.ID, decoded[knowledge.SearchInput](map[string]any{"query": q, "top_k": 3, "strategy": "dense"}))
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	got, want := search("  who may\tdistribute\nDerivative Works?\r\n"), search("who may distribute Derivative Works?")
	if len(got) == 0 || len(got) != len(want) {
		t.Fatalf("%d hits, %d for the collapsed query", len(got), len(want))
	}
	for i := range got {
		if got[i].ID != want[i].ID || got[i].Score-want[i].Score > 1e-5 || want[i].Score-got[i].Score > 1e-5 || got[i].Text != want[i].Text {
			t.Errorf("hit %d: %s %.6f, the collapsed query's %s %.6f", i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
		}
	}
}

func dot32(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
