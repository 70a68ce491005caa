package knowledge_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// numbered is n sentences of five words each, numbered so that no two are alike.
func numbered(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "Sentence %d has five words. ", i)
	}
	return b.String()
}

// chunksOf is how many chunks text makes at 15 words a chunk, no overlap.
func chunksOf(t *testing.T, text string) int {
	t.Helper()
	s, err := chunk.New(domain.Chunking{Strategy: chunk.StrategyRecursive, ChunkSize: 15, SplitBy: chunk.SplitWord,
		RecursiveSeparators: chunk.AttheneSeparators()})
	if err != nil {
		t.Fatal(err)
	}
	return len(s.Split(text))
}

// TestIngestFileChunkCap: a file that makes more chunks than one file may is a failed datasource
// saying so (nothing of it embedded or indexed); the other file is ingested.
func TestIngestFileChunkCap(t *testing.T) {
	n, limit := chunksOf(t, numbered(30)), chunksOf(t, numbered(6))
	if n <= limit {
		t.Fatalf("the big file makes %d chunks, the small one %d", n, limit)
	}
	k := newKBService(t, func(_ *knowledge.Deps, l *knowledge.Limits) { l.MaxFileChunks = limit })
	big := k.addFile(t, alice, "big.txt", numbered(30))
	small := k.addFile(t, alice, "small.txt", numbered(6))
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(big, small),
		"chunking_strategy": map[string]any{"chunk_size": 15, "chunk_overlap": 0}})
	if errs := k.drain(t); len(errs) != 0 {
		t.Fatalf("jobs failed: %v", errs)
	}
	got := k.get(t, alice, kb.ID)
	want := fmt.Sprintf("the file makes %d chunks, more than the %d one file may make", n, limit)
	if got.Status != domain.KBCompleted || !strings.Contains(sourceErrors(got)[big.ID], want) {
		t.Fatalf("status %s, errors %v; want big.txt failed with %q", got.Status, sourceErrors(got), want)
	}
	for _, text := range k.Emb.Embedded() {
		if strings.Contains(text, "Sentence 29 ") {
			t.Fatalf("a chunk of the refused file was embedded: %q", text)
		}
	}
	if got := k.indexed(t, "acme", kb.ID, ""); len(got[big.ID]) != 0 || len(got[small.ID]) != limit {
		t.Errorf("index: %v", got)
	}
}

// TestIngestKBChunkCap: the files of one run may make at most MaxKBChunks chunks together; the
// file that would take the run past it fails saying so, the ones before it are ingested.
func TestIngestKBChunkCap(t *testing.T) {
	per := chunksOf(t, numbered(15))
	k := newKBService(t, func(_ *knowledge.Deps, l *knowledge.Limits) { l.MaxFileChunks, l.MaxKBChunks = 2*per, 2*per+1 })
	var files []*domain.File
	for i := range 3 {
		files = append(files, k.addFile(t, alice, fmt.Sprintf("f%d.txt", i), numbered(15)))
	}
	kb := k.createKB(t, alice, "KB", map[string]any{"selected_datasources": idList(files...),
		"chunking_strategy": map[string]any{"chunk_size": 15, "chunk_overlap": 0}})
	if errs := k.drain(t); len(errs) != 0 {
		t.Fatalf("jobs failed: %v", errs)
	}
	got := k.get(t, alice, kb.ID)
	chunks, failed := 0, 0
	for _, f := range files {
		snap := snapshot(got, f.ID)
		chunks += snap.Chunks
		if snap.Status == domain.IngestFailed {
			failed++
			if want := fmt.Sprintf("would take the knowledge base past the %d chunks its files may make together", 2*per+1); !strings.Contains(snap.Error, want) {
				t.Errorf("error %q, want it to say %q", snap.Error, want)
			}
		}
	}
	if got.Status != domain.KBCompleted || failed != 1 || chunks != 2*per {
		t.Fatalf("status %s, %d failed, %d chunks ingested; want completed, 1 failed, %d chunks: %+v", got.Status, failed, chunks, 2*per, snapshots(got))
	}
	if n := len(k.indexed(t, "acme", kb.ID, "")); n != 2 {
		t.Errorf("%d files in the index, want 2", n)
	}
}

// TestKBSelectedDatasourcesBounds: selected_datasources lists at most 1,000 ids, and a body
// with many unknown ids answers a 400 of MaxFieldErrors entries and one counting the rest, not
// one entry per id.
func TestKBSelectedDatasourcesBounds(t *testing.T) {
	k := newKBService(t)
	ids := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = fmt.Sprintf("5d8f4c1e-2b3a-4c5d-8e9f-%012d", i)
		}
		return out
	}
	_, err := k.Svc.CreateKB(kbCtx(t), alice, decoded[knowledge.KBInput](map[string]any{"name": "KB", "selected_datasources": ids(knowledge.MaxSelectedDatasources + 1)}))
	kbWantErr(t, err, domain.KindInvalid, "selected_datasources")

	_, err = k.Svc.CreateKB(kbCtx(t), alice, decoded[knowledge.KBInput](map[string]any{"name": "KB", "selected_datasources": ids(knowledge.MaxSelectedDatasources)}))
	var de *domain.Error
	kbWantErr(t, err, domain.KindInvalid)
	if !errorsAs(err, &de) || len(de.Fields) != knowledge.MaxFieldErrors+1 {
		t.Fatalf("%d field errors, want %d", len(de.Fields), knowledge.MaxFieldErrors+1)
	}
	last := de.Fields[len(de.Fields)-1]
	if last.Field != "selected_datasources" || !strings.Contains(last.Message, fmt.Sprintf("and %d more errors", knowledge.MaxSelectedDatasources-knowledge.MaxFieldErrors)) {
		t.Errorf("last entry %+v", last)
	}
	if b, _ := json.Marshal(de.Fields); len(b) > 4096 {
		t.Errorf("the error list is %d bytes", len(b))
	}
	if n := k.Store.Get("PutKB"); n != 0 {
		t.Errorf("%d knowledge bases stored", n)
	}
}

func errorsAs(err error, target **domain.Error) bool { return errors.As(err, target) }
