package spectest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A small spec in the published one's shapes: a query is allOf [base, own properties], a
// container lists queries, a map is explicit, one alternative is free, one field is newer.
const miniSpec = `{
  "components": {
    "schemas": {
      "Base": {"type": "object", "properties": {"boost": {"type": "number"}, "_name": {"type": "string"}}},
      "Hybrid": {"allOf": [{"$ref": "#/components/schemas/Base"}, {"type": "object", "properties": {
        "queries": {"type": "array", "items": {"$ref": "#/components/schemas/Container"}},
        "pagination_depth": {"type": "integer"},
        "filter": {"$ref": "#/components/schemas/Container", "x-version-added": "3.0"}}}]},
      "Term": {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1},
      "Container": {"type": "object", "properties": {
        "hybrid": {"$ref": "#/components/schemas/Hybrid"},
        "term": {"$ref": "#/components/schemas/Term"}}, "minProperties": 1, "maxProperties": 1},
      "Processor": {"oneOf": [
        {"type": "object", "properties": {"rrf": {"type": "object", "properties": {"k": {"type": "integer"}}}}, "required": ["rrf"]},
        {"type": "object", "properties": {"agentic": {"type": "object"}}, "required": ["agentic"], "x-version-added": "3.2"}]},
      "Loose": {"oneOf": [{"type": "string"}, {"type": "object"}]}
    },
    "requestBodies": {
      "search": {"content": {"application/json": {"schema": {"type": "object", "properties": {
        "query": {"$ref": "#/components/schemas/Container"},
        "processor": {"$ref": "#/components/schemas/Processor"},
        "loose": {"$ref": "#/components/schemas/Loose"}}}}}}
    }
  }
}`

func TestCloseObjects(t *testing.T) {
	doc, err := unmarshal([]byte(miniSpec))
	if err != nil {
		t.Fatal(err)
	}
	closeObjects(doc, "2.19")
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(strictURL, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(strictURL + "#/components/requestBodies/search/content/application~1json/schema")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body string
		bad  string // "" if valid, else a path the error names
	}{
		{`{"query":{"hybrid":{"queries":[{"term":{"kb":"a"}}],"pagination_depth":5,"boost":2,"_name":"h"}}}`, ""},
		{`{"query":{"hybrid":{"queries":[],"depth":5}}}`, "/query/hybrid/depth"},
		{`{"query":{"hybrid":{"queries":[{"hybrid":{"queries":[],"x":1}}]}}}`, "/query/hybrid/queries/0/hybrid/x"},
		{`{"query":{"hybrid":{"queries":[],"filter":{"term":{"kb":"a"}}}}}`, "/query/hybrid/filter"},
		{`{"query":{"nope":{}}}`, "/query/nope"},
		{`{"query":{"term":{"any_field":"v"}}}`, ""},
		{`{"processor":{"rrf":{"k":60}}}`, ""},
		{`{"processor":{"rrf":{"k":60,"c":1}}}`, "/processor/rrf/c"},
		{`{"processor":{"rrf":{},"extra":1}}`, "/processor/extra"},
		{`{"processor":{"agentic":{}}}`, "/processor"},
		{`{"loose":{"anything":1}}`, ""},
		{`{"size":1}`, "/size"},
	} {
		var inst any
		if err := json.Unmarshal([]byte(tc.body), &inst); err != nil {
			t.Fatal(err)
		}
		err := sch.Validate(inst)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s refused: %v", tc.body, err)
		case tc.bad != "" && err == nil:
			t.Errorf("%s passes, want an error at %s", tc.body, tc.bad)
		case tc.bad != "" && !strings.Contains(err.Error(), "'"+tc.bad+"'"):
			t.Errorf("%s: the error does not name %s:\n%v", tc.body, tc.bad, err)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"2.19", "2.19", 0}, {"2.19", "2.19.0", 0}, {"3.0", "2.19", 1}, {"2.9", "2.19", -1}, {"2.19.1", "2.19", 1}} {
		if got := compareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersions(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	node := map[string]any{"x-version-added": "2.19"}
	if !inVersion(node, "2.19") || inVersion(map[string]any{"x-version-added": "3.0"}, "2.19") ||
		inVersion(map[string]any{"x-version-removed": "2.0"}, "2.19") || !inVersion(map[string]any{"x-version-removed": "3.0"}, "2.19") {
		t.Error("inVersion disagrees with x-version-added/x-version-removed")
	}
}
