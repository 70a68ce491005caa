package api_test

import (
	"strings"
	"testing"
)

// guideMD is a Markdown file of sections whose paragraphs do not name them.
const guideMD = `# Returns guide

## Refunds

Money comes back within fourteen days of the parcel arriving at our store, to the card that paid.

## Exchanges

An item may be swapped for another size while stock lasts, once per order.
`

// TestContextualHeadersStack: through the API on the stack (DynamoDB Local, S3 and SQS
// stand-ins, the OpenSearch stand-in, the local embedder), a knowledge base created with
// chunking_strategy.contextual_headers shows it in its detail, and its chunks are the same as
// without it, returned with their own text, but stored with other vectors: a query of a
// chunk's own text matches it perfectly only without headers.
func TestContextualHeadersStack(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	f := s.uploadFile(key, "returns-guide.md", "text/markdown", []byte(guideMD))
	small := func(headers bool) map[string]any {
		return map[string]any{"chunk_size": 100, "chunk_overlap": 0, "split_by": "char", "contextual_headers": headers}
	}
	kbs := map[bool]string{}
	for _, headers := range []bool{false, true} {
		kb := s.created(key, "/api/v1/knowledge-bases/", map[string]any{"name": "guide", "processing_engine": "opensearch",
			"selected_datasources": []any{f["id"]}, "embedding_config": map[string]any{"provider": "local"}, "chunking_strategy": small(headers)})
		kbs[headers] = kb["id"].(string)
		if st := s.waitKB(key, kbs[headers]); st["knowledge_base"].(map[string]any)["status"] != "completed" {
			t.Fatalf("ingestion: %v", st)
		}
		detail := s.ok("GET", "/api/v1/knowledge-bases/"+kbs[headers]+"/", key, nil).json(t)
		cs, _ := detail["chunking_strategy"].(map[string]any)
		if got, _ := cs["contextual_headers"].(bool); got != headers {
			t.Errorf("detail chunking_strategy %v: want contextual_headers %v", cs, headers)
		}
	}

	const chunk = "Money comes back within fourteen days of the parcel arriving at our store, to the card that paid."
	for _, headers := range []bool{false, true} {
		hits := s.search(key, kbs[headers], map[string]any{"query": chunk, "top_k": 1, "strategy": "dense"})
		if len(hits) != 1 || hits[0]["text"] != chunk {
			t.Fatalf("contextual_headers %v: hits %v, want the chunk %q with its own text", headers, hits, chunk)
		}
		score := hits[0]["score"].(float64)
		if perfect := score > 0.9999; perfect == headers {
			t.Errorf("contextual_headers %v: the chunk's own text scores %.5f against its stored vector", headers, score)
		}
		all := s.search(key, kbs[headers], map[string]any{"query": "exchanges refunds guide", "top_k": 10, "strategy": "bm25"})
		for _, h := range all {
			if text, _ := h["text"].(string); strings.Contains(text, "—") || !strings.Contains(guideMD, text) {
				t.Errorf("contextual_headers %v: hit text %q is not the file's own", headers, text)
			}
		}
	}
}
