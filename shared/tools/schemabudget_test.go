package tools

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// nested is the schema bomb of issue 23: level i is anyOf two $refs to level i+1, the last a
// string, under an object root. Checking an object against it tries every path: 2^depth.
func nested(depth int) map[string]any {
	defs := map[string]any{fmt.Sprintf("l%d", depth): map[string]any{"type": "string"}}
	for i := 0; i < depth; i++ {
		ref := map[string]any{"$ref": fmt.Sprintf("#/$defs/l%d", i+1)}
		defs[fmt.Sprintf("l%d", i)] = map[string]any{"anyOf": []any{ref, ref}}
	}
	return map[string]any{"type": "object", "$ref": "#/$defs/l0", "$defs": defs}
}

// recursive is the bomb a static count does not see: two branches that both descend into "a"
// with the whole schema, so each level of the arguments doubles the work.
func recursive() map[string]any {
	branch := map[string]any{"properties": map[string]any{"a": map[string]any{"$ref": "#"}}}
	return map[string]any{"type": "object", "anyOf": []any{branch, branch}, "properties": map[string]any{"b": map[string]any{"type": "string"}}}
}

// deep nests {"a": …} depth times around leaf.
func deep(depth int, leaf any) map[string]any {
	v := map[string]any{"a": leaf}
	for i := 1; i < depth; i++ {
		v = map[string]any{"a": v}
	}
	return v
}

// within runs f and fails the test when f has not returned after 30 s, a generous wait: the
// bombs ran for minutes before the budget. The budget itself is counted, not timed (TestSteps).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s has not returned after 30 s; the budget should have ended it", what)
	}
}

func TestSchemaBudgetAtCompile(t *testing.T) {
	tree := map[string]any{"type": "object", "$defs": map[string]any{"node": map[string]any{"type": "object",
		"properties": map[string]any{"name": map[string]any{"type": "string"}, "children": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/node"}}}}},
		"properties": map[string]any{"root": map[string]any{"$ref": "#/$defs/node"}}}
	addr := map[string]any{"type": "object", "properties": map[string]any{"street": map[string]any{"type": "string"}, "zip": map[string]any{"type": "string", "pattern": "^[0-9]{5}$"}}}
	reuse := map[string]any{"type": "object", "$defs": map[string]any{"addr": addr}, "properties": map[string]any{
		"home": map[string]any{"$ref": "#/$defs/addr"}, "work": map[string]any{"$ref": "#/$defs/addr"},
		"kind": map[string]any{"oneOf": []any{map[string]any{"const": "a"}, map[string]any{"const": "b"}, map[string]any{"type": "integer"}}},
		"any":  map[string]any{"anyOf": []any{map[string]any{"$ref": "#/$defs/addr"}, map[string]any{"type": "null"}}}}}
	draft7 := map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
		"definitions": map[string]any{"s": map[string]any{"type": "string"}}, "properties": map[string]any{"x": map[string]any{"$ref": "#/definitions/s"}}}
	for _, tt := range []struct {
		name    string
		schema  map[string]any
		says    string // "" when it compiles
		complex bool   // refused as too complex
	}{
		{"nested 40", nested(40), "expands to more than 10000 subschemas", true},
		{"nested 12", nested(12), "expands to more than 10000 subschemas", true},
		{"nested 10", nested(10), "", false},
		{"recursive", recursive(), "", false},
		{"tree", tree, "", false},
		{"reuse", reuse, "", false},
		{"draft-07", draft7, "", false},
		{"loop", map[string]any{"type": "object", "$defs": map[string]any{"a": map[string]any{"allOf": []any{map[string]any{"$ref": "#/$defs/b"}}}, "b": map[string]any{"anyOf": []any{map[string]any{"$ref": "#/$defs/a"}}}},
			"$ref": "#/$defs/a"}, "a $ref loop", false},
		{"self", map[string]any{"type": "object", "anyOf": []any{map[string]any{"$ref": "#"}, map[string]any{"type": "object"}}}, "a $ref loop", false},
		{"dynamic", map[string]any{"type": "object", "$dynamicAnchor": "n", "properties": map[string]any{"x": map[string]any{"$dynamicRef": "#n"}}}, "$dynamicRef", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			within(t, "compile", func() { _, err = CompileSchema(tt.schema) })
			switch {
			case tt.says == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says)):
				t.Fatalf("error %v, want one saying %q", err, tt.says)
			case errors.Is(err, errTooComplex) != tt.complex:
				t.Fatalf("error %v: too complex = %v, want %v", err, errors.Is(err, errTooComplex), tt.complex)
			}
		})
	}
}

// A tool bound with a schema too complex to check answers every call with an error the model
// reads (at once); one that does not compile otherwise checks nothing (the MCP server does).
func TestLazySchemaTooComplex(t *testing.T) {
	for _, tt := range []struct {
		schema map[string]any
		says   string // "" when the check passes
	}{
		{nested(40), "too complex"},
		{map[string]any{"type": "object", "$ref": "other.json"}, ""},
		{map[string]any{"type": "object"}, ""},
	} {
		l := &lazySchema{schema: tt.schema}
		var err error
		within(t, "check", func() { err = l.Check(map[string]any{"a": 1.0}) })
		switch {
		case tt.says == "" && err != nil:
			t.Errorf("%v: %v, want no error", tt.schema, err)
		case tt.says != "" && (!errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tt.says)):
			t.Errorf("%v: %v, want an invalid input saying %q", tt.schema, err, tt.says)
		}
	}
}

func TestSchemaBudgetAtCheck(t *testing.T) {
	s, err := CompileSchema(recursive())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args map[string]any
		says string // "" when valid
	}{
		{"shallow", deep(3, map[string]any{}), ""},
		{"shallow invalid", deep(3, 5.0), "/a/a/a"},
		{"deep 40", deep(40, map[string]any{}), "too deeply nested"},
		{"deep 40 invalid", deep(40, 5.0), "too deeply nested"},
		{"wide", map[string]any{"b": strings.Repeat("x", 1000)}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			within(t, "check", func() { err = s.Check(tt.args) })
			switch {
			case tt.says == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tt.says != "" && (!errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tt.says)):
				t.Fatalf("error %v, want an invalid input saying %q", err, tt.says)
			}
		})
	}
}

// The count is an upper bound of the library's evaluations: one per subschema applied, every
// branch followed, a type the value does not have ending the path.
func TestSteps(t *testing.T) {
	for _, tt := range []struct {
		name   string
		schema map[string]any
		value  string
		want   int
	}{
		{"properties", map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}, "additionalProperties": map[string]any{"type": "number"}},
			`{"a":"x","b":1,"c":2}`, 4},
		{"type prunes", map[string]any{"type": "string", "anyOf": []any{true, true}}, `{}`, 1},
		{"anyOf all branches", map[string]any{"anyOf": []any{true, true, map[string]any{"$ref": "#/$defs/x"}}, "$defs": map[string]any{"x": true}}, `1`, 5},
		{"prefixItems and items", map[string]any{"prefixItems": []any{true}, "items": map[string]any{"type": "string"}, "contains": true}, `[1,2,3]`, 7},
		{"draft-07 $ref hides siblings", map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "#/definitions/x",
			"properties": map[string]any{"a": true}, "definitions": map[string]any{"x": true}}, `{"a":1}`, 2},
		{"nested 10", nested(10), `{"a":1}`, 4<<10 - 2},                            // level i takes 3 + 2·(level i+1), the last 1
		{"recursive 5", recursive(), `{"a":{"a":{"a":{"a":{"a":{}}}}}}`, 8<<5 - 5}, // each "a" level 5 + 2·(the next), {} 3
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := CompileSchema(tt.schema)
			if err != nil {
				t.Fatal(err)
			}
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.value))
			if err != nil {
				t.Fatal(err)
			}
			c := steps{limit: 1 << 30, same: s.same}
			if !c.walk(s.s, v) {
				t.Fatal("over the limit")
			}
			if c.n != tt.want {
				t.Errorf("steps = %d, want %d", c.n, tt.want)
			}
		})
	}
}

// Argument errors quote at most an excerpt of what the arguments brought.
func TestArgumentErrorsAreShort(t *testing.T) {
	big := strings.Repeat("x", 60<<10)
	for _, tt := range []struct {
		name   string
		schema map[string]any
		args   map[string]any
		says   string
	}{
		{"pattern", map[string]any{"type": "object", "properties": map[string]any{"w": map[string]any{"type": "string", "pattern": "^[a-z]{1,10}$"}}},
			map[string]any{"w": big}, "does not match pattern"},
		{"format", map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": map[string]any{"w": map[string]any{"type": "string", "format": "email"}}},
			map[string]any{"w": big}, "is not valid email"},
		{"additional property", map[string]any{"type": "object", "additionalProperties": false},
			map[string]any{big: 1.0, "b" + big: 1.0, "c": 1.0, "d": 1.0, "e": 1.0, "f": 1.0, "g": 1.0}, "(and 2 more)"},
		{"property name", map[string]any{"type": "object", "propertyNames": map[string]any{"maxLength": 5}},
			map[string]any{big: 1.0}, "maxLength"},
		{"deep location", map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}},
			map[string]any{big: map[string]any{big: 1.0}}, "want string"},
		{"const", map[string]any{"type": "object", "properties": map[string]any{"w": map[string]any{"const": "a"}}},
			map[string]any{"w": big}, "value must be 'a'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := CompileSchema(tt.schema)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Check(tt.args)
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("error %.300v, want an invalid input saying %q", err, tt.says)
			}
			if n := len(err.Error()); n > 1000 {
				t.Errorf("error of %d bytes: %.300s…", n, err)
			}
		})
	}
}

// BenchmarkNestedSchema times the answer to the schema bomb at depths 20, 22, 24 (compile
// and check, as a tool's first call does), and the check of the recursive bomb with arguments 20
// to 24 deep. Before the budget: 0.71, 2.44 and 9.8 s per check in the measure.
func BenchmarkNestedSchema(b *testing.B) {
	for _, depth := range []int{20, 22, 24} {
		b.Run(fmt.Sprintf("nested-%d", depth), func(b *testing.B) {
			schema := nested(depth)
			for b.Loop() {
				l := &lazySchema{schema: schema}
				if err := l.Check(map[string]any{"a": 1.0}); err == nil {
					b.Fatal("no error")
				}
			}
		})
		b.Run(fmt.Sprintf("recursive-%d", depth), func(b *testing.B) {
			s, err := CompileSchema(recursive())
			if err != nil {
				b.Fatal(err)
			}
			args := deep(depth, 5.0)
			for b.Loop() {
				if err := s.Check(args); err == nil {
					b.Fatal("no error")
				}
			}
		})
	}
}

// BenchmarkCheck times an ordinary check: the count before the library's validation, and the
// library alone.
func BenchmarkCheck(b *testing.B) {
	s, err := CompileSchema(map[string]any{"type": "object", "required": []any{"word"}, "properties": map[string]any{
		"word": map[string]any{"type": "string", "maxLength": 100}, "n": map[string]any{"type": "integer", "minimum": 1},
		"tags": map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}}}})
	if err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"word": "otter", "n": 2.0, "tags": []any{"a", "b", 3.0, "d", 5.0}}
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if err := s.Check(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("steps", func(b *testing.B) {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"word":"otter","n":2,"tags":["a","b",3,"d",5]}`))
		for b.Loop() {
			c := steps{limit: MaxCheckSteps, same: s.same}
			c.walk(s.s, v)
		}
	})
}
