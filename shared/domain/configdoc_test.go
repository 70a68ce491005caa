package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConfigDocAsSent: a document decodes with its numbers as written, encodes back with the keys
// sorted, and hashes those bytes, so what is stored, echoed and versioned is what was sent.
func TestConfigDocAsSent(t *testing.T) {
	var d ConfigDoc
	if err := json.Unmarshal([]byte(`{"name":"a","llm_config":{"temperature":0.20,"max_tokens":100}}`), &d); err != nil {
		t.Fatal(err)
	}
	const canonical = `{"llm_config":{"max_tokens":100,"temperature":0.20},"name":"a"}`
	got, err := json.Marshal(d)
	if err != nil || string(got) != canonical {
		t.Errorf("Marshal = %s, %v; want %s", got, err, canonical)
	}
	sum := sha256.Sum256([]byte(canonical))
	if want := hex.EncodeToString(sum[:8]); d.Hash() != want {
		t.Errorf("Hash = %s, want %s", d.Hash(), want)
	}
	if d.Hash() != ConfigHash(d.Object()) {
		t.Error("Hash differs from ConfigHash of the object")
	}
	if d.Name() != "a" || d.IsZero() {
		t.Errorf("Name = %q, IsZero = %v", d.Name(), d.IsZero())
	}
}

func TestConfigDocUnmarshalRefuses(t *testing.T) {
	for _, in := range []string{`[1]`, `"a"`, `3`, `{`} {
		var d ConfigDoc
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("Unmarshal(%s) = %v, want an error", in, d.Object())
		}
	}
	d := ConfigDocOf(map[string]any{"name": "a"})
	if err := json.Unmarshal([]byte(`null`), &d); err != nil || !d.IsZero() {
		t.Errorf("Unmarshal(null) = %v, %v; want no document", d.Object(), err)
	}
	if !(ConfigDoc{}).IsZero() || ConfigDocOf(map[string]any{}).IsZero() {
		t.Error("IsZero confuses no document with an empty one")
	}
}

func TestConfigDocMerge(t *testing.T) {
	cur := ConfigDocOf(map[string]any{"name": "a", "system_prompt": "p", "llm_config": map[string]any{"model": "m", "temperature": 0.1}})
	got := cur.Merge(ConfigDocOf(map[string]any{"system_prompt": nil, "llm_config": map[string]any{"temperature": nil}, "tools": []any{"x"}}))
	want := map[string]any{"name": "a", "llm_config": map[string]any{"model": "m"}, "tools": []any{"x"}}
	if diff := cmp.Diff(want, got.Object()); diff != "" {
		t.Errorf("merge (-want +got):\n%s", diff)
	}
	if _, ok := cur.Object()["system_prompt"]; !ok {
		t.Error("merge changed the current document")
	}
}

func TestConfigDocParse(t *testing.T) {
	d := ConfigDocOf(map[string]any{"agent_type": AgentTypeLLM})
	if g, errs := d.Parse(nil, "system_config"); g != nil || len(errs) != 1 || errs[0].Field != "system_config.name" {
		t.Errorf("Parse = %v, %+v; want one error on system_config.name", g, errs)
	}
	g, errs := ConfigDocOf(map[string]any{"name": "a"}).Parse(nil, "")
	if len(errs) > 0 || g.Name != "a" || g.Nodes["a"] == nil {
		t.Errorf("Parse = %+v, %+v", g, errs)
	}
}
