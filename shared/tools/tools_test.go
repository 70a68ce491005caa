package tools

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/google/go-cmp/cmp"
)

// named is a minimal tool for registry tests.
type named string

func (n named) Spec() domain.ToolSpec { return domain.ToolSpec{Name: string(n)} }
func (n named) Call(context.Context, map[string]any) (string, error) {
	return string(n), nil
}

func TestRegistry(t *testing.T) {
	r := NewRegistry(Builtins(Options{})...)
	if diff := cmp.Diff([]string{"calculator", "current_time", "http_request"}, r.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	for _, name := range r.Names() {
		tool, ok := r.Tool(name)
		if !ok || tool.Spec().Name != name {
			t.Errorf("Tool(%q) = %v, %v", name, tool, ok)
		}
	}
	if _, ok := r.Tool("knowledge_base_search"); ok {
		t.Error("Tool found an unregistered name")
	}

	if err := r.Register(named("knowledge_base_search")); err != nil {
		t.Fatalf("Register: %v", err)
	}
	if _, ok := r.Tool("knowledge_base_search"); !ok {
		t.Error("registered tool not found")
	}
	if got := r.Names(); !sort.StringsAreSorted(got) || len(got) != 4 {
		t.Errorf("Names after Register = %q, want 4 sorted names", got)
	}

	for _, tc := range []struct {
		tool domain.Tool
		want error
	}{
		{named("calculator"), ErrDuplicateTool},
		{nil, ErrInvalidTool},
		{named(""), ErrInvalidTool},
		{named("has space"), ErrInvalidTool},
		{named(strings.Repeat("x", 65)), ErrInvalidTool},
	} {
		if err := r.Register(tc.tool); !errors.Is(err, tc.want) {
			t.Errorf("Register(%v) = %v, want %v", tc.tool, err, tc.want)
		}
	}
	tool, _ := r.Tool("calculator")
	if _, ok := tool.(calculator); !ok {
		t.Errorf("a refused duplicate replaced the built-in calculator: %T", tool)
	}
}

func TestNewRegistryKeepsFirstOfDuplicates(t *testing.T) {
	r := NewRegistry(named("a"), nil, named("a"), named("bad name"), named("b"))
	if diff := cmp.Diff([]string{"a", "b"}, r.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	var zero Registry
	if err := zero.Register(named("z")); err != nil {
		t.Errorf("Register on a zero Registry: %v", err)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	r := NewRegistry()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = r.Register(named("t" + string(rune('a'+i))))
			r.Names()
			r.Tool("ta")
		}()
	}
	wg.Wait()
	if n := len(r.Names()); n != 8 {
		t.Errorf("%d tools registered, want 8", n)
	}
}

func TestCheckInput(t *testing.T) {
	schema := objectSchema(map[string]any{
		"s": map[string]any{"type": "string", "maxLength": 3, "enum": []string{"a", "bb", "long"}},
		"o": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}, "maxProperties": 2},
	}, "s")
	for _, tc := range []struct {
		name  string
		input map[string]any
		want  string // "" for valid
	}{
		{"valid", map[string]any{"s": "bb", "o": map[string]any{"k": "v"}}, ""},
		{"missing required", map[string]any{"o": map[string]any{}}, "input.s is required"},
		{"null", map[string]any{"s": nil}, "input.s must be a string, not null"},
		{"bool", map[string]any{"s": true}, "input.s must be a string, not a boolean"},
		{"array", map[string]any{"s": []any{"a"}}, "input.s must be a string, not an array"},
		{"enum", map[string]any{"s": "c"}, `input.s must be one of ["a" "bb" "long"], not "c"`},
		{"maxLength", map[string]any{"s": "long"}, "input.s is longer than 3 characters"},
		{"unknown", map[string]any{"s": "a", "zz": 1.0}, `input has unknown property "zz" (allowed: ["o" "s"])`},
		{"nested type", map[string]any{"s": "a", "o": map[string]any{"k": 1.0}}, "input.o.k must be a string, not a number"},
		{"maxProperties", map[string]any{"s": "a", "o": map[string]any{"a": "", "b": "", "c": ""}}, "input.o has more than 2 properties"},
	} {
		err := checkInput(schema, tc.input)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.want != "" && (!errors.Is(err, ErrInvalidInput) || !strings.HasSuffix(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want ErrInvalidInput ending in %q", tc.name, err, tc.want)
		}
	}
}
