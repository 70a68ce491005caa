package bedrockrerank

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// body is a valid request with edit applied to its decoded form.
func body(t *testing.T, edit func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(`{"queries":[{"type":"TEXT","textQuery":{"text":"refund days"}}],
		"sources":[{"type":"INLINE","inlineDocumentSource":{"type":"TEXT","textDocument":{"text":"shipping takes days"}}},
		           {"type":"INLINE","inlineDocumentSource":{"type":"TEXT","textDocument":{"text":"a refund within thirty days"}}},
		           {"type":"INLINE","inlineDocumentSource":{"type":"JSON","jsonDocument":{"refund":"no"}}}],
		"rerankingConfiguration":{"type":"BEDROCK_RERANKING_MODEL","bedrockRerankingConfiguration":{"numberOfResults":2,
		  "modelConfiguration":{"modelArn":"arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0"}}}}`), &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func conf(m map[string]any) map[string]any {
	return m["rerankingConfiguration"].(map[string]any)["bedrockRerankingConfiguration"].(map[string]any)
}

// TestStandIn: a signed, well-formed request is scored by word overlap, best first, cut to
// numberOfResults; every constraint of the service model is a 400 ValidationException; an
// unsigned request is a 403.
func TestStandIn(t *testing.T) {
	hs := httptest.NewServer(New(Options{}))
	defer hs.Close()
	post := func(b string, signed bool) (*http.Response, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/rerank", strings.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		if signed {
			req.Header.Set("X-Amz-Date", "20261127T100000Z")
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKID/20261127/us-west-2/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=00")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp, out
	}
	resp, out := post(body(t, nil), true)
	got, _ := json.Marshal(out)
	if resp.StatusCode != 200 || string(got) != `{"results":[{"index":1,"relevanceScore":1},{"index":0,"relevanceScore":0.5}]}` {
		t.Errorf("%d %s", resp.StatusCode, got)
	}
	if resp, _ := post(body(t, nil), false); resp.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned: %d", resp.StatusCode)
	}
	long := strings.Repeat("a", MaxTextLength+1)
	many := make([]any, MaxSources+1)
	for i := range many {
		many[i] = map[string]any{"type": "INLINE", "inlineDocumentSource": map[string]any{"type": "TEXT", "textDocument": map[string]any{"text": "x"}}}
	}
	for name, edit := range map[string]func(m map[string]any){
		"two queries":  func(m map[string]any) { m["queries"] = append(m["queries"].([]any), m["queries"].([]any)[0]) },
		"no sources":   func(m map[string]any) { m["sources"] = []any{} },
		"1001 sources": func(m map[string]any) { m["sources"] = many },
		"query too long": func(m map[string]any) {
			m["queries"] = []any{map[string]any{"type": "TEXT", "textQuery": map[string]any{"text": long}}}
		},
		"empty source text": func(m map[string]any) {
			m["sources"].([]any)[0].(map[string]any)["inlineDocumentSource"].(map[string]any)["textDocument"] = map[string]any{"text": ""}
		},
		"source type": func(m map[string]any) { m["sources"].([]any)[0].(map[string]any)["type"] = "S3" },
		"document type": func(m map[string]any) {
			m["sources"].([]any)[0].(map[string]any)["inlineDocumentSource"].(map[string]any)["type"] = "PDF"
		},
		"JSON without document": func(m map[string]any) {
			delete(m["sources"].([]any)[2].(map[string]any)["inlineDocumentSource"].(map[string]any), "jsonDocument")
		},
		"config type":  func(m map[string]any) { m["rerankingConfiguration"].(map[string]any)["type"] = "OTHER" },
		"no config":    func(m map[string]any) { delete(m, "rerankingConfiguration") },
		"zero results": func(m map[string]any) { conf(m)["numberOfResults"] = 0 },
		"1001 results": func(m map[string]any) { conf(m)["numberOfResults"] = 1001 },
		"no model":     func(m map[string]any) { conf(m)["modelConfiguration"] = map[string]any{} },
		"bad ARN": func(m map[string]any) {
			conf(m)["modelConfiguration"] = map[string]any{"modelArn": "arn:aws:bedrock:us-west-2::foundation-model/Amazon Rerank"}
		},
		"other Region": func(m map[string]any) {
			conf(m)["modelConfiguration"] = map[string]any{"modelArn": "arn:aws:bedrock:eu-central-1::foundation-model/amazon.rerank-v1:0"}
		},
		"unknown model": func(m map[string]any) {
			conf(m)["modelConfiguration"] = map[string]any{"modelArn": "arn:aws:bedrock:us-west-2::foundation-model/amazon.titan-embed-text-v2:0"}
		},
		"queries a string": func(m map[string]any) { m["queries"] = "refund" },
		"blank nextToken":  func(m map[string]any) { m["nextToken"] = "a b" },
	} {
		resp, out := post(body(t, edit), true)
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("X-Amzn-ErrorType"), "ValidationException") || out["message"] == "" {
			t.Errorf("%s: %d %s %v", name, resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), out)
		}
	}
}
