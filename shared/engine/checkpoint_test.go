package engine

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/checkpoint.json from fullCheckpoint")

// fullCheckpoint is a checkpoint with every field set, as a paused run keeps it.
func fullCheckpoint() *checkpoint {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	return &checkpoint{
		Steps: 2, Runs: 3, Frontier: []string{"b", "c"},
		Messages: []savedMessage{
			{ID: "m1", Node: "a", Content: "first", Visible: true, CreatedAt: at,
				Citations: []domain.Citation{{Index: 1, KnowledgeBaseID: "kb1", FileID: "f1", FileName: "a.txt", ChunkIndex: 4, Score: 0.5, Text: "passage"}},
				Retrieved: true},
			{ID: "m2", Node: "a", Content: "hidden", CreatedAt: at},
		},
		Usage: domain.Usage{InputTokens: 10, OutputTokens: 20}, StopReason: domain.StopToolUse,
		Done: map[string]*savedDone{"c": {Text: "done", StopReason: domain.StopEndTurn, Usage: domain.Usage{InputTokens: 1, OutputTokens: 2},
			Finished: at, Citations: []domain.Citation{}, Retrieved: true}},
		Paused: map[string]*nodeState{"b": {
			Turns: []domain.Turn{
				{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartText, Text: "hi"},
					{Type: domain.PartImage, Image: &domain.Media{Format: "png", Data: []byte{1, 2}}},
					{Type: domain.PartDocument, Document: &domain.Media{Format: "pdf", Name: "d.pdf", Data: []byte{3}}}}},
				{Role: domain.RoleAssistant, Parts: []domain.Part{{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{ID: "t0", Name: "calc", Input: map[string]any{"x": 1.5}}}}},
				{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartToolResult, ToolResult: &domain.ToolResult{ToolUseID: "t0", Content: "2", IsError: true}},
					{Type: domain.PartToolResult, ToolResult: &domain.ToolResult{ToolUseID: "t9", Content: "ok"}}}},
			},
			Asked: []domain.Part{{Type: domain.PartText, Text: "calling"},
				{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{ID: "t1", Name: "echo", Input: map[string]any{"s": "a"}}},
				{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{ID: "t2", Name: "fn", Input: map[string]any{}}},
				// Not seen in a model's turn, but the record has room for it.
				{Type: domain.PartDocument, Document: &domain.Media{Format: "txt", Name: "n.txt", Data: []byte("hi")}}},
			Results:  []*domain.ToolResult{{ToolUseID: "t1", Content: "a"}, nil},
			Checked:  []bool{true, false},
			Approved: map[string]bool{"t1": true},
			Waiting:  map[string]string{"t2": PauseToolCalls},
			Servers:  map[string]string{"t1": "srv"}, ServerIDs: map[string]string{"t1": "srv-id"},
			External: map[string]string{"t2": "b/t2"}, Iteration: 2, Last: "calling",
			Usage: domain.Usage{InputTokens: 3, OutputTokens: 4},
			Retrieval: &savedRetrieval{Searched: true, Passages: []savedPassage{{Index: 1, KBName: "docs",
				Hit: domain.Hit{ID: "h1", KBID: "kb1", FileID: "f1", FileName: "a.txt", ChunkIndex: 4, Text: "passage", Tags: []string{"x"}, Score: 0.5}}}},
		}},
		Query: "what", Stored: 1,
	}
}

// TestCheckpointFormat holds the checkpoint's JSON (kept in an execution item while a run
// waits) to the bytes of testdata/checkpoint.json, written by the code before the engine kept
// its own record types: a run paused before a deploy resumes after it.
func TestCheckpointFormat(t *testing.T) {
	path := filepath.Join("testdata", "checkpoint.json")
	got, err := fullCheckpoint().encode()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("encode() =\n%s\nwant (%s)\n%s", got, path, want)
	}
	cp, err := decodeCheckpoint(want)
	if err != nil {
		t.Fatal(err)
	}
	again, err := cp.encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, want) {
		t.Errorf("decoded and encoded again =\n%s\nwant\n%s", again, want)
	}
}

// TestCheckpointRead reads the stored checkpoint back into what the engine resumes with.
func TestCheckpointRead(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := decodeCheckpoint(b)
	if err != nil {
		t.Fatal(err)
	}
	ns := cp.Paused["b"]
	if ns == nil {
		t.Fatalf("no paused node b in %s", b)
	}
	uses := ns.uses()
	if len(uses) != 2 || uses[0].ID != "t1" || uses[0].Name != "echo" || uses[0].Input["s"] != "a" {
		t.Errorf("uses() = %+v", uses)
	}
	if got := ns.text(); got != "calling" {
		t.Errorf("text() = %q", got)
	}
	if got, want := cp.Usage, (domain.Usage{InputTokens: 10, OutputTokens: 20}); got != want {
		t.Errorf("usage = %+v, want %+v", got, want)
	}
	o := cp.Done["c"].outcome()
	if o.usage != (domain.Usage{InputTokens: 1, OutputTokens: 2}) || o.citations == nil || len(o.citations) != 0 {
		t.Errorf("done outcome = %+v", o)
	}
	wantCite := []domain.Citation{{Index: 1, KnowledgeBaseID: "kb1", FileID: "f1", FileName: "a.txt", ChunkIndex: 4, Score: 0.5, Text: "passage"}}
	if diff := cmp.Diff(wantCite, cp.Messages[0].Citations); diff != "" {
		t.Errorf("message citations (-want +got):\n%s", diff)
	}
	r := &retrieval{byKey: map[string]int{}}
	r.restore(ns.Retrieval)
	wantHit := domain.Hit{ID: "h1", KBID: "kb1", FileID: "f1", FileName: "a.txt", ChunkIndex: 4, Text: "passage", Tags: []string{"x"}, Score: 0.5}
	if len(r.passages) != 1 || r.passages[0].kbName != "docs" {
		t.Fatalf("restored passages = %+v", r.passages)
	}
	if diff := cmp.Diff(wantHit, r.passages[0].hit); diff != "" {
		t.Errorf("restored hit (-want +got):\n%s", diff)
	}
	turns := ns.Turns
	if len(turns) != 3 || turns[2].Parts[0].ToolResult == nil || !turns[2].Parts[0].ToolResult.IsError || turns[2].Parts[0].ToolResult.ToolUseID != "t0" {
		t.Errorf("turns = %+v", turns)
	}
}
