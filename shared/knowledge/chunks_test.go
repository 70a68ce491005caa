package knowledge_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
)

// TestChunks: an ingested file's chunks read back page by page are the chunks ingestion
// indexed, in document order, each with its position and its tokens as the embedder counts them;
// the pages say whether more follow, past the end there are none. Another company's principal,
// an unknown knowledge base and a file that is not one of its datasources are 404; a missing,
// malformed file_id, a negative offset and a limit out of range are 400 naming the field.
func TestChunks(t *testing.T) {
	k := newKBService(t)
	text := strings.Repeat("Parcels leave the warehouse every weekday at noon. ", 12)
	f := k.addFile(t, alice, "shipping.txt", text)
	other := k.addFile(t, alice, "returns.txt", returnsText)
	kb := k.createKB(t, alice, "Docs", map[string]any{"selected_datasources": idList(f, other),
		"chunking_strategy": map[string]any{"chunk_size": 120, "chunk_overlap": 0, "split_by": "char"}})
	if errs := k.drain(t); len(errs) != 0 {
		t.Fatalf("jobs failed: %v", errs)
	}
	var want []string
	for _, c := range k.Index.Stored() {
		if c.FileID == f.ID {
			for len(want) <= c.ChunkIndex {
				want = append(want, "")
			}
			want[c.ChunkIndex] = c.Text
		}
	}
	if len(want) < 5 {
		t.Fatalf("the file was cut into %d chunks; the test needs at least 5", len(want))
	}

	var got []string
	for offset := 0; ; offset += 2 {
		page, more, err := k.Svc.Chunks(kbCtx(t), bob, kb.ID, knowledge.ChunksInput{FileID: f.ID, Offset: offset, Limit: 2})
		if err != nil {
			t.Fatalf("Chunks at %d: %v", offset, err)
		}
		for i, c := range page {
			if c.ChunkIndex != offset+i || c.FileID != f.ID || c.FileName != "shipping.txt" || c.KBID != kb.ID || c.Vector != nil {
				t.Errorf("chunk %d of the page at %d: %+v", i, offset, c)
			}
			if c.Tokens != k.Emb.Tokens(c.Text) || c.Tokens <= 0 {
				t.Errorf("chunk %d has %d tokens; the embedder counts %d", c.ChunkIndex, c.Tokens, k.Emb.Tokens(c.Text))
			}
			got = append(got, c.Text)
		}
		if wantMore := offset+2 < len(want); more != wantMore {
			t.Errorf("page at %d: more %v, want %v", offset, more, wantMore)
		}
		if !more {
			break
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the file's chunks paged (-indexed +read):\n%s", diff)
	}
	past, more, err := k.Svc.Chunks(kbCtx(t), alice, kb.ID, knowledge.ChunksInput{FileID: f.ID, Offset: len(want), Limit: 10})
	if err != nil || len(past) != 0 || more {
		t.Errorf("past the end: %v, %v, %v; want none", past, more, err)
	}

	for _, tc := range []struct {
		name   string
		p      domain.Principal
		kb     string
		in     knowledge.ChunksInput
		kind   domain.Kind
		fields []string
	}{
		{"another company", eve, kb.ID, knowledge.ChunksInput{FileID: f.ID, Limit: 10}, domain.KindNotFound, nil},
		{"no such knowledge base", alice, "0190a8e2-0000-7000-8000-000000000000", knowledge.ChunksInput{FileID: f.ID, Limit: 10}, domain.KindNotFound, nil},
		{"not a datasource", alice, kb.ID, knowledge.ChunksInput{FileID: "0190a8e2-0000-7000-8000-000000000001", Limit: 10}, domain.KindNotFound, nil},
		{"no file_id", alice, kb.ID, knowledge.ChunksInput{Limit: 10}, domain.KindInvalid, []string{"file_id"}},
		{"malformed file_id", alice, kb.ID, knowledge.ChunksInput{FileID: "x", Limit: 10}, domain.KindInvalid, []string{"file_id"}},
		{"negative offset", alice, kb.ID, knowledge.ChunksInput{FileID: f.ID, Offset: -1, Limit: 10}, domain.KindInvalid, []string{"offset"}},
		{"limit 0", alice, kb.ID, knowledge.ChunksInput{FileID: f.ID}, domain.KindInvalid, []string{"limit"}},
		{"limit too large", alice, kb.ID, knowledge.ChunksInput{FileID: f.ID, Limit: knowledge.MaxChunksLimit + 1}, domain.KindInvalid, []string{"limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := k.Svc.Chunks(kbCtx(t), tc.p, tc.kb, tc.in)
			kbWantErr(t, err, tc.kind, tc.fields...)
		})
	}
}
