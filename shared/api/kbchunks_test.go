package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestKnowledgeChunks: GET /knowledge-bases/{id}/chunks/?file_id pages through an ingested
// file's chunks in document order (chunk_index 0, 1, 2 … across pages, the Link header naming
// the next page until the last), each with its text, characters and tokens; the pages together
// hold the file's words in order. Another company's key gets 404, as does a file outside the
// knowledge base; a missing file_id and a bad limit are 400 naming the parameter.
func TestKnowledgeChunks(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	var text strings.Builder
	for i := range 40 {
		text.WriteString("Sentence number ")
		text.WriteString(strings.Repeat("x", i%7+1))
		text.WriteString(" of the shipping notes.\n")
	}
	f := s.uploadFile(key, "notes.txt", "text/plain", []byte(text.String()))
	other := s.uploadFile(key, "other.txt", "text/plain", []byte(returnsPolicy))
	fileID := f["id"].(string)
	kb := s.created(key, "/api/v1/knowledge-bases/", map[string]any{"name": "Notes", "processing_engine": "opensearch",
		"selected_datasources": []any{fileID},
		"chunking_strategy":    map[string]any{"chunk_size": 200, "chunk_overlap": 0, "split_by": "char"}})
	kbID := kb["id"].(string)
	if st := s.waitKB(key, kbID); st["knowledge_base"].(map[string]any)["status"] != "completed" {
		t.Fatalf("the knowledge base did not complete: %v", st)
	}

	base := "/api/v1/knowledge-bases/" + kbID + "/chunks/"
	next := base + "?file_id=" + fileID + "&limit=3"
	var texts []string
	pages := 0
	for next != "" {
		res := s.ok("GET", next, key, nil)
		pages++
		var page []map[string]any
		if err := json.Unmarshal(res.body, &page); err != nil {
			t.Fatalf("page %d is not an array: %s", pages, res.body)
		}
		for _, c := range page {
			if c["chunk_index"] != float64(len(texts)) || c["file_id"] != fileID || c["file_name"] != "notes.txt" || c["knowledge_base_id"] != kbID {
				t.Errorf("chunk %d of the file is %v", len(texts), c)
			}
			txt, _ := c["text"].(string)
			if c["characters"] != float64(len([]rune(txt))) || c["tokens"] == nil || c["tokens"].(float64) <= 0 {
				t.Errorf("chunk %v: characters %v, tokens %v", c["chunk_index"], c["characters"], c["tokens"])
			}
			texts = append(texts, txt)
		}
		next = ""
		if link := res.header.Get("Link"); link != "" {
			next = strings.TrimPrefix(strings.SplitN(link, ">", 2)[0], "<")
			if len(page) != 3 {
				t.Errorf("page %d holds %d chunks and names a next page", pages, len(page))
			}
		}
		if pages > 50 {
			t.Fatal("more than 50 pages")
		}
	}
	if pages < 3 {
		t.Errorf("the file came in %d pages of 3 chunks; the test needs a file of more", pages)
	}
	if got, want := strings.Fields(strings.Join(texts, " ")), strings.Fields(text.String()); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the chunks read in order hold\n%q\nnot the file's words\n%q", got, want)
	}

	for _, tc := range []struct {
		name, path, key string
		status          int
		field           string
	}{
		{"another company", base + "?file_id=" + fileID, s.key("eve", "globex"), http.StatusNotFound, ""},
		{"a file outside the knowledge base", base + "?file_id=" + other["id"].(string), key, http.StatusNotFound, ""},
		{"no file_id", base, key, http.StatusBadRequest, "file_id"},
		{"a malformed file_id", base + "?file_id=x", key, http.StatusBadRequest, "file_id"},
		{"limit 0", base + "?file_id=" + fileID + "&limit=0", key, http.StatusBadRequest, "limit"},
		{"offset -1", base + "?file_id=" + fileID + "&offset=-1", key, http.StatusBadRequest, "offset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.do(req{method: "GET", path: tc.path, key: tc.key})
			if res.status != tc.status {
				t.Fatalf("status %d, want %d: %s", res.status, tc.status, res.body)
			}
			if tc.field != "" && !strings.Contains(string(res.body), `"field":"`+tc.field+`"`) {
				t.Errorf("the 400 does not name %s: %s", tc.field, res.body)
			}
		})
	}
}
