package domain

import (
	"bytes"
	"encoding/json"
	"testing"
)

func decodeDoc(t *testing.T, text string) ConfigDoc {
	t.Helper()
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		t.Fatal(err)
	}
	return ConfigDocJSON(obj, []byte(text))
}

// TestOrderedJSON: a document keeps its members in the client's order at every depth, written as
// the API writes the decoded object (escapes but no HTML ones, numbers as sent), so that it has the
// same bytes as the sorted form but for their places, the same value and the same hash.
func TestOrderedJSON(t *testing.T) {
	text := `{ "system_prompt": "Zebra \u00e9 <b> & \"q\"", "name":"Ordered",
		"llm_config": {"temperature": 0.30, "provider": "local", "max_tokens": 1e3},
		"tools": [{"z": true, "a": null}, "x", 2], "agent_type": "llm_agent", "empty": {}, "none": [] }`
	d := decodeDoc(t, text)
	got, err := d.OrderedJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"system_prompt":"Zebra é <b> & \"q\"","name":"Ordered",` +
		`"llm_config":{"temperature":0.30,"provider":"local","max_tokens":1e3},` +
		`"tools":[{"z":true,"a":null},"x",2],"agent_type":"llm_agent","empty":{},"none":[]}`
	if string(got) != want {
		t.Errorf("OrderedJSON:\n%s\nwant\n%s", got, want)
	}
	sorted, _ := encodeJSON(d.Object())
	if len(got) != len(sorted) || bytes.Equal(got, sorted) {
		t.Errorf("%d bytes, the sorted form has %d: not the same members, or not reordered", len(got), len(sorted))
	}
	again := decodeDoc(t, string(got))
	if again.Hash() != d.Hash() {
		t.Errorf("the hash of the ordered text %s differs from the document's %s", again.Hash(), d.Hash())
	}
	if round, _ := again.OrderedJSON(); string(round) != want {
		t.Errorf("the ordered text read again gives %s", round)
	}
	got[0] = 'X' // the caller's copy
	if again, _ := d.OrderedJSON(); again[0] != '{' {
		t.Error("OrderedJSON hands out the document's own bytes")
	}
}

// TestOrderedJSONUnknown: a document whose text does not give its members exactly (a key twice)
// or that has no text (from a map, merged) answers the sorted form.
func TestOrderedJSONUnknown(t *testing.T) {
	for name, d := range map[string]ConfigDoc{
		"duplicate key":        decodeDoc(t, `{"name":"a","b":1,"name":"c"}`),
		"duplicate nested key": decodeDoc(t, `{"name":"c","b":{"x":1,"x":2}}`),
		"from a map":           ConfigDocOf(map[string]any{"name": "c", "b": json.Number("1")}),
		"merged":               decodeDoc(t, `{"name":"c","b":1}`).Merge(decodeDoc(t, `{"a":2}`)),
	} {
		got, err := d.OrderedJSON()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := encodeJSON(d.Object())
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %s, want the sorted %s", name, got, want)
		}
	}
	if d := decodeDoc(t, `{"name":"c","b":{"x":1,"x":2}}`); d.Object()["b"].(map[string]any)["x"] != json.Number("2") {
		t.Errorf("decoded %v", d.Object())
	}
}
