package tools

import (
	"errors"
	"strings"
	"testing"
)

func TestCompileSchema(t *testing.T) {
	for _, tt := range []struct {
		schema map[string]any
		says   string // "" when it compiles
	}{
		{map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}, ""},
		{map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "nonsense"}}}, "/properties/a/type"},
		{map[string]any{"type": "object", "$ref": "file:///etc/passwd"}, "only references within the schema"},
		{map[string]any{"type": "object", "$ref": "other.json"}, "only references within the schema"},
	} {
		_, err := CompileSchema(tt.schema)
		switch {
		case tt.says == "" && err != nil:
			t.Errorf("%v: %v", tt.schema, err)
		case tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says)):
			t.Errorf("%v: error %v, want one saying %q", tt.schema, err, tt.says)
		case err != nil && strings.Contains(err.Error(), "/work/"):
			t.Errorf("%v: the error shows a local path: %v", tt.schema, err)
		}
	}
}

func TestSchemaCheck(t *testing.T) {
	s, err := CompileSchema(map[string]any{"type": "object", "required": []any{"word"},
		"properties": map[string]any{"word": map[string]any{"type": "string"}, "n": map[string]any{"type": "integer", "minimum": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(map[string]any{"word": "otter", "n": 2.0}); err != nil {
		t.Fatalf("valid arguments: %v", err)
	}
	for args, says := range map[string]map[string]any{
		"/word": {"word": 3.0},
		"word":  {"n": 2.0},
		"/n":    {"word": "x", "n": 0.0},
	} {
		err := s.Check(says)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), args) {
			t.Errorf("%v: %v, want an invalid input naming %s", says, err, args)
		}
	}
}
