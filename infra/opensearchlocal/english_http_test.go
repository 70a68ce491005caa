package opensearchlocal_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"
)

// A text field mapped with the english analyzer (here a multi-field beside the standard one, as
// a knowledge base's chunk text will be) is indexed and searched with it: a match query on it
// finds inflected and possessive forms that the standard field does not.
func TestEnglishAnalyzedField(t *testing.T) {
	s := newStand(t)
	s.createIndex(t, "kb", `{"mappings":{"properties":{"text":{"type":"text","fields":{"en":{"type":"text","analyzer":"english"}}},
		"plain":{"type":"text","analyzer":"english","search_analyzer":"standard"}}}}`)
	s.bulk(t, `{"index":{"_index":"kb","_id":"1"}}
{"text":"The licensee's rights terminate automatically.","plain":"running"}
{"index":{"_index":"kb","_id":"2"}}
{"text":"A dog runs in the park.","plain":"run"}
`, opensearchapi.BulkParams{Refresh: "true"})

	cases := []struct {
		query string
		want  []string
	}{
		{`{"query":{"match":{"text.en":"licensee right terminating"}}}`, []string{"1"}},
		{`{"query":{"match":{"text":"licensee right terminating"}}}`, nil},
		{`{"query":{"match":{"text.en":{"query":"running dogs","operator":"and"}}}}`, []string{"2"}},
		{`{"query":{"match":{"text":{"query":"running dogs","operator":"and"}}}}`, nil},
		// Stop words are not terms of the english field: "the" alone matches nothing there.
		{`{"query":{"match":{"text.en":"the"}}}`, nil},
		// The query's own analyzer wins over the field's: standard leaves "runs" unstemmed.
		{`{"query":{"match":{"text.en":{"query":"runs","analyzer":"standard"}}}}`, nil},
		{`{"query":{"match":{"text.en":{"query":"runs","analyzer":"english"}}}}`, []string{"2"}},
		// A search_analyzer is used for queries, the analyzer for indexing.
		{`{"query":{"match":{"plain":"run"}}}`, []string{"1", "2"}},
		{`{"query":{"match":{"plain":"running"}}}`, nil},
	}
	for _, c := range cases {
		got := hitIDs(s.search(t, "kb", c.query))
		if len(got) > 1 {
			got = sortedCopy(got)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.query, diff)
		}
	}

	// The mapping reads back as given (GET /{index}).
	code, body := s.json(t, "GET", "/kb", "")
	en := body["kb"].(map[string]any)["mappings"].(map[string]any)["properties"].(map[string]any)["text"].(map[string]any)["fields"].(map[string]any)["en"]
	if code != 200 || !cmp.Equal(en, map[string]any{"type": "text", "analyzer": "english"}) {
		t.Errorf("GET /kb: %d, text.en = %v", code, en)
	}

	// As in OpenSearch's TextFieldMapper, a search_analyzer needs an analyzer.
	code, body = s.json(t, "PUT", "/bad", `{"mappings":{"properties":{"t":{"type":"text","search_analyzer":"english"}}}}`)
	if e := errorOf(t, body); code != 400 || e["type"] != "mapper_parsing_exception" {
		t.Errorf("search_analyzer alone: %d %v", code, e)
	}
}

func sortedCopy(ss []string) []string {
	out := append([]string(nil), ss...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
