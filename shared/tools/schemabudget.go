package tools

import (
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A tool's input schema comes from a client or an MCP server, and the library validates by
// following every branch: nested anyOf + $ref doubles the work per level (40 levels are 3.7 KB),
// and a recursive $ref whose branches descend into the same value doubles it per level of the
// arguments. Neither can be stopped once the library runs, so both are bounded before it does:
// the schema when it is compiled, the arguments before each check.
const (
	// MaxSchemaExpansion bounds a schema's subschemas counted with every $ref inlined (each
	// recursion counted once): past it the schema is refused when it is compiled.
	MaxSchemaExpansion = 10_000
	// MaxCheckSteps bounds the subschema evaluations one check may take, counted on the arguments
	// before they are validated; past it the arguments are refused unchecked.
	MaxCheckSteps = 100_000
)

// errTooComplex marks a schema refused for its expansion: an MCP tool with such a schema answers
// the model with it rather than passing arguments through unchecked.
var errTooComplex = errors.New("too complex to check arguments against")

// checkBudget refuses a compiled schema whose checks the step count could not bound: a $ref loop
// that never descends into the value (the library would only report the loop), $dynamicRef and
// $recursiveRef (their targets depend on the path taken), and an expansion past
// MaxSchemaExpansion. It returns each subschema's sameValue list, for steps.
func checkBudget(root *jsonschema.Schema) (map[*jsonschema.Schema][]*jsonschema.Schema, error) {
	a := &expansion{same: map[*jsonschema.Schema][]*jsonschema.Schema{}, size: map[*jsonschema.Schema]int{},
		onPath: map[*jsonschema.Schema]bool{}, state: map[*jsonschema.Schema]uint8{}}
	if err := a.loops(root); err != nil {
		return nil, err
	}
	if n := a.expand(root); n > MaxSchemaExpansion {
		return nil, fmt.Errorf("%w: with its $refs followed it expands to more than %d subschemas", errTooComplex, MaxSchemaExpansion)
	}
	return a.same, nil
}

type expansion struct {
	same   map[*jsonschema.Schema][]*jsonschema.Schema // sameValue of every subschema
	size   map[*jsonschema.Schema]int                  // expand's result, once known
	onPath map[*jsonschema.Schema]bool                 // expand's current path
	state  map[*jsonschema.Schema]uint8                // cycle: 1 on the path, 2 done
}

// loops refuses $dynamicRef and $recursiveRef, and a cycle of subschemas applied to one same
// value, anywhere under root.
func (a *expansion) loops(root *jsonschema.Schema) error {
	seen := map[*jsonschema.Schema]bool{root: true}
	all := []*jsonschema.Schema{root}
	for i := 0; i < len(all); i++ {
		s := all[i]
		if s.RecursiveRef != nil || s.DynamicRef != nil {
			return fmt.Errorf("%s: $recursiveRef and $dynamicRef are not supported in a tool's schema", where(s))
		}
		a.same[s] = sameValue(s)
		for _, t := range append(sameValue(s), parts(s)...) {
			if !seen[t] {
				seen[t] = true
				all = append(all, t)
			}
		}
	}
	for _, s := range all {
		if err := a.cycle(s); err != nil {
			return err
		}
	}
	return nil
}

// cycle is a depth-first walk of the subschemas applied to one same value.
func (a *expansion) cycle(s *jsonschema.Schema) error {
	switch a.state[s] {
	case 1:
		return fmt.Errorf("%s refers back to itself without descending into the value (a $ref loop)", where(s))
	case 2:
		return nil
	}
	a.state[s] = 1
	for _, t := range a.same[s] {
		if err := a.cycle(t); err != nil {
			return err
		}
	}
	a.state[s] = 2
	return nil
}

// expand counts s and the subschemas under it, $refs inlined and a recursion counted once,
// saturating past MaxSchemaExpansion.
func (a *expansion) expand(s *jsonschema.Schema) int {
	if n, ok := a.size[s]; ok {
		return n
	}
	if a.onPath[s] {
		return 1
	}
	a.onPath[s] = true
	n := 1
	for _, t := range append(a.same[s], parts(s)...) {
		n = min(n+a.expand(t), MaxSchemaExpansion+1)
	}
	delete(a.onPath, s)
	a.size[s] = n
	return n
}

// where names a subschema by its place in the tool's schema.
func where(s *jsonschema.Schema) string {
	if loc, ok := strings.CutPrefix(s.Location, schemaURL); ok {
		if loc == "" || loc == "#" {
			return "the schema"
		}
		return strings.TrimPrefix(loc, "#")
	}
	return s.Location
}

// sameValue lists the subschemas the validator may apply to the value s checks ($ref,
// combinators, conditionals, dependent schemas). A draft-07 or older $ref hides its siblings.
func sameValue(s *jsonschema.Schema) []*jsonschema.Schema {
	if s.Bool != nil {
		return nil
	}
	if s.DraftVersion < 2019 && s.Ref != nil {
		return []*jsonschema.Schema{s.Ref}
	}
	var out []*jsonschema.Schema
	for _, t := range []*jsonschema.Schema{s.Ref, s.Not, s.If, s.Then, s.Else} {
		if t != nil {
			out = append(out, t)
		}
	}
	out = append(append(append(out, s.AllOf...), s.AnyOf...), s.OneOf...)
	for _, t := range s.DependentSchemas {
		out = append(out, t)
	}
	for _, d := range s.Dependencies {
		if t, ok := d.(*jsonschema.Schema); ok {
			out = append(out, t)
		}
	}
	return out
}

// parts lists the subschemas the validator may apply to a part of the value: a property, its
// name, an item. (contentSchema is not among them: content is never asserted here.)
func parts(s *jsonschema.Schema) []*jsonschema.Schema {
	if s.Bool != nil || s.DraftVersion < 2019 && s.Ref != nil {
		return nil
	}
	var out []*jsonschema.Schema
	for _, t := range []*jsonschema.Schema{s.PropertyNames, s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems} {
		if t != nil {
			out = append(out, t)
		}
	}
	for _, t := range s.Properties {
		out = append(out, t)
	}
	for _, t := range s.PatternProperties {
		out = append(out, t)
	}
	if t, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		out = append(out, t)
	}
	switch items := s.Items.(type) {
	case *jsonschema.Schema:
		out = append(out, items)
	case []*jsonschema.Schema:
		out = append(out, items...)
	}
	if t, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
		out = append(out, t)
	}
	return append(out, s.PrefixItems...)
}

// steps counts the subschema evaluations that checking v against s may take. It follows every
// path the library's validator may follow (all branches of a combinator, no short cut taken on
// a match or a first error) and prunes only where the validator stops first (a boolean schema, a
// type the value does not have), so the validator takes at most as many. It stops counting past
// limit: the count costs no more than the limit allows.
type steps struct {
	n, limit int
	same     map[*jsonschema.Schema][]*jsonschema.Schema // checkBudget's
}

// walk counts v against s; false once past the limit.
func (c *steps) walk(s *jsonschema.Schema, v any) bool {
	if c.n++; c.n > c.limit {
		return false
	}
	if s.Bool != nil || !hasType(s.Types, v) {
		return true
	}
	if s.DraftVersion < 2019 && s.Ref != nil {
		return c.walk(s.Ref, v)
	}
	for _, t := range c.same[s] {
		if !c.walk(t, v) {
			return false
		}
	}
	switch v := v.(type) {
	case map[string]any:
		return c.object(s, v)
	case []any:
		return c.array(s, v)
	}
	return true
}

func (c *steps) object(s *jsonschema.Schema, obj map[string]any) bool {
	for k, v := range obj {
		matched := false
		if t, ok := s.Properties[k]; ok {
			matched = true
			if !c.walk(t, v) {
				return false
			}
		}
		for re, t := range s.PatternProperties {
			if re.MatchString(k) {
				matched = true
				if !c.walk(t, v) {
					return false
				}
			}
		}
		if t, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !matched && !c.walk(t, v) {
			return false
		}
		if s.UnevaluatedProperties != nil && !c.walk(s.UnevaluatedProperties, v) {
			return false
		}
		if s.PropertyNames != nil && !c.walk(s.PropertyNames, k) {
			return false
		}
	}
	return true
}

func (c *steps) array(s *jsonschema.Schema, arr []any) bool {
	for i, v := range arr {
		var each []*jsonschema.Schema
		if s.DraftVersion < 2020 {
			switch items := s.Items.(type) {
			case *jsonschema.Schema:
				each = append(each, items)
			case []*jsonschema.Schema:
				if i < len(items) {
					each = append(each, items[i])
				} else if t, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
					each = append(each, t)
				}
			default:
				if t, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
					each = append(each, t)
				}
			}
		} else if i < len(s.PrefixItems) {
			each = append(each, s.PrefixItems[i])
		} else if s.Items2020 != nil {
			each = append(each, s.Items2020)
		}
		for _, t := range []*jsonschema.Schema{s.Contains, s.UnevaluatedItems} {
			if t != nil {
				each = append(each, t)
			}
		}
		for _, t := range each {
			if !c.walk(t, v) {
				return false
			}
		}
	}
	return true
}

// hasType reports whether v (as jsonschema.UnmarshalJSON decodes it) may have one of types; an
// integer type counts any number, which only makes the count larger.
func hasType(types *jsonschema.Types, v any) bool {
	if types == nil || types.IsEmpty() {
		return true
	}
	var want jsonschema.Types
	switch v.(type) {
	case nil:
		want.Add("null")
	case bool:
		want.Add("boolean")
	case string:
		want.Add("string")
	case []any:
		want.Add("array")
	case map[string]any:
		want.Add("object")
	default:
		want.Add("number")
		want.Add("integer")
	}
	return *types&want != 0
}
