package domain

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var formSchema = map[string]any{"type": "object", "required": []any{"age"}, "properties": map[string]any{
	"name":   map[string]any{"type": "string", "default": "John Doe"},
	"age":    map[string]any{"type": "integer"},
	"score":  map[string]any{"type": "number", "default": 95.5},
	"status": map[string]any{"type": "string", "enum": []any{"active", "inactive"}, "default": "active"},
	"ok":     map[string]any{"type": "boolean", "default": true},
	"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
}}

// TestElicitDefaults: every property with a default that the form lacks gets it; what the
// person gave stays, and the given content is not modified.
func TestElicitDefaults(t *testing.T) {
	in := map[string]any{"age": 3, "ok": false}
	got := ElicitDefaults(formSchema, in)
	want := map[string]any{"age": 3, "ok": false, "name": "John Doe", "score": 95.5, "status": "active"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(in) != 2 {
		t.Errorf("the content was modified: %v", in)
	}
	if got := ElicitDefaults(formSchema, nil); len(got) != 4 {
		t.Errorf("an empty form: %v, want the four defaults", got)
	}
}

func TestCheckElicitContent(t *testing.T) {
	tests := []struct {
		name    string
		content map[string]any
		want    []string // fields
	}{
		{"fits", map[string]any{"age": json.Number("41"), "name": "A", "tags": []any{"x"}, "status": "inactive"}, nil},
		{"required missing", map[string]any{"name": "A"}, []string{"c.age"}},
		{"wrong types", map[string]any{"age": 4.5, "name": 3.0, "ok": "yes", "tags": []any{1.0}}, []string{"c.age", "c.name", "c.ok", "c.tags"}},
		{"not in the enum", map[string]any{"age": 1.0, "status": "gone"}, []string{"c.status"}},
		{"unknown field", map[string]any{"age": 1.0, "extra": "x"}, []string{"c.extra"}},
	}
	for _, tt := range tests {
		var got []string
		for _, e := range CheckElicitContent("c", formSchema, tt.content) {
			got = append(got, e.Field)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: fields (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestElicitationKey: the same question has the same key however its schema was built; another
// message or schema another.
func TestElicitationKey(t *testing.T) {
	var decoded map[string]any
	b, _ := json.Marshal(formSchema)
	_ = json.Unmarshal(b, &decoded)
	a := Elicitation{Message: "who?", Schema: formSchema}
	if a.Key() != (Elicitation{Message: "who?", Schema: decoded}).Key() {
		t.Error("the same question decoded again has another key")
	}
	if a.Key() == (Elicitation{Message: "who!", Schema: formSchema}).Key() || a.Key() == (Elicitation{Message: "who?"}).Key() {
		t.Error("another question has the same key")
	}
}
