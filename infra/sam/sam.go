// Package sam reads the project's AWS SAM template (template.yaml) so that tests and tools can
// check it against the Go code: which functions exist, which routes each serves, and the shape
// of the table, queues and buckets. No CloudFormation linter or goformation is obtainable here, so
// the template is parsed with yaml.v3 and the short-form intrinsic tags (!Ref, !GetAtt, !Sub …)
// are turned into their long form ({"Ref": …}, {"Fn::GetAtt": […]} …) while decoding.
package sam

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Template is a parsed SAM template. Values are plain Go data: map[string]any, []any, string,
// int, float64, bool and nil, with intrinsic functions in long form.
type Template struct {
	Resources  map[string]Resource
	Globals    map[string]any
	Outputs    map[string]any
	Parameters map[string]any
}

// Resource is one entry of the template's Resources section.
type Resource struct {
	Type       string
	Properties map[string]any
	Metadata   map[string]any
}

// Load reads and parses the template at path.
func Load(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load template: %w", err)
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse parses a template from YAML (JSON is YAML too).
func Parse(b []byte) (*Template, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("template is empty")
		}
		return nil, fmt.Errorf("template: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("template: more than one YAML document")
	}
	v, err := value(&doc)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("template: the top level must be a mapping")
	}
	t := &Template{Resources: map[string]Resource{}}
	if t.Globals, err = section(top, "Globals"); err != nil {
		return nil, err
	}
	if t.Outputs, err = section(top, "Outputs"); err != nil {
		return nil, err
	}
	if t.Parameters, err = section(top, "Parameters"); err != nil {
		return nil, err
	}
	resources, err := section(top, "Resources")
	if err != nil {
		return nil, err
	}
	if len(resources) == 0 {
		return nil, errors.New("template: Resources is missing or empty")
	}
	for id, raw := range resources {
		r, err := resource(id, raw)
		if err != nil {
			return nil, err
		}
		t.Resources[id] = r
	}
	return t, nil
}

// section returns a top-level mapping; an absent section is an empty map.
func section(top map[string]any, name string) (map[string]any, error) {
	v, ok := top[name]
	if !ok || v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("template: %s must be a mapping", name)
	}
	return m, nil
}

func resource(id string, raw any) (Resource, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return Resource{}, fmt.Errorf("resource %s: must be a mapping", id)
	}
	typ, _ := m["Type"].(string)
	if typ == "" {
		return Resource{}, fmt.Errorf("resource %s: Type is missing or not a string", id)
	}
	r := Resource{Type: typ, Properties: map[string]any{}, Metadata: map[string]any{}}
	for name, dst := range map[string]*map[string]any{"Properties": &r.Properties, "Metadata": &r.Metadata} {
		v, ok := m[name]
		if !ok || v == nil {
			continue
		}
		if *dst, ok = v.(map[string]any); !ok {
			return Resource{}, fmt.Errorf("resource %s: %s must be a mapping", id, name)
		}
	}
	return r, nil
}

// intrinsics maps each short-form tag to its long-form key. !GetAtt is handled on its own: its
// scalar form "Resource.Attribute" becomes a two-element list.
var intrinsics = map[string]string{
	"!Ref":         "Ref",
	"!Condition":   "Condition",
	"!Sub":         "Fn::Sub",
	"!Join":        "Fn::Join",
	"!If":          "Fn::If",
	"!Select":      "Fn::Select",
	"!Split":       "Fn::Split",
	"!Equals":      "Fn::Equals",
	"!Not":         "Fn::Not",
	"!And":         "Fn::And",
	"!Or":          "Fn::Or",
	"!FindInMap":   "Fn::FindInMap",
	"!Base64":      "Fn::Base64",
	"!Cidr":        "Fn::Cidr",
	"!ImportValue": "Fn::ImportValue",
	"!GetAZs":      "Fn::GetAZs",
	"!GetAtt":      "Fn::GetAtt",
}

// value converts a YAML node into plain Go data, expanding intrinsic tags.
func value(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return value(n.Content[0])
	case yaml.AliasNode:
		return value(n.Alias)
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return intrinsic(n)
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, vn := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: mapping keys must be scalars", k.Line)
			}
			if k.Tag == "!!merge" {
				return nil, fmt.Errorf("line %d: merge keys (<<) are not supported by CloudFormation", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q defined twice", k.Line, k.Value)
			}
			v, err := value(vn)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := value(c)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str", "!!timestamp", "!!binary":
			// Dates such as AWSTemplateFormatVersion stay the strings they were written as.
			return n.Value, nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

// intrinsic expands one short-form tag into {"Fn::…": argument}.
func intrinsic(n *yaml.Node) (any, error) {
	key, ok := intrinsics[n.Tag]
	if !ok {
		return nil, fmt.Errorf("line %d: unknown tag %s", n.Line, n.Tag)
	}
	plain := *n
	plain.Tag = ""
	if n.Kind == yaml.ScalarNode {
		plain.Tag = "!!str" // !Ref 2 and !Ref true name things; keep them strings
	}
	arg, err := value(&plain)
	if err != nil {
		return nil, err
	}
	if n.Tag == "!GetAtt" {
		switch a := arg.(type) {
		case string:
			res, attr, ok := strings.Cut(a, ".")
			if !ok || res == "" || attr == "" {
				return nil, fmt.Errorf("line %d: !GetAtt %q is not Resource.Attribute", n.Line, a)
			}
			arg = []any{res, attr}
		case []any:
			if len(a) != 2 {
				return nil, fmt.Errorf("line %d: !GetAtt needs [Resource, Attribute]", n.Line)
			}
		default:
			return nil, fmt.Errorf("line %d: !GetAtt needs a string or a list", n.Line)
		}
	}
	if n.Tag == "!Ref" || n.Tag == "!Condition" {
		if s, ok := arg.(string); !ok || s == "" {
			return nil, fmt.Errorf("line %d: %s needs a name", n.Line, n.Tag)
		}
	}
	return map[string]any{key: arg}, nil
}
