package spectest

import "strings"

// Requests are checked against a closed copy of the spec. The published spec leaves objects
// open (it lists no additionalProperties: false), so a misspelt or invented field in a query
// would pass it; OpenSearch's parsers refuse them instead: the query builders' fromXContent
// throw ParsingException "[hybrid] query does not support [x]" (neural-search
// HybridQueryBuilder, k-NN KNNQueryBuilderParser, core's MatchQueryBuilder, BoolQueryBuilder …),
// SearchSourceBuilder.parseXContent "Unknown key for a START_OBJECT in [x]", and a search
// pipeline's processor factories fail on unused configuration ("processor [x] doesn't support
// one or more provided configuration parameters", ConfigurationUtils). closeObjects makes every
// object schema that lists its properties and admits no others explicitly
// (additionalProperties, patternProperties, unevaluatedProperties) refuse unlisted ones.
//
// It adds unevaluatedProperties: false (draft 2020-12), not additionalProperties: false, and
// where a schema is used, not inside the composition that builds it: a query is
// allOf [QueryBase, {its own properties}], and only unevaluatedProperties on the whole sees the
// properties both parts define.

// kind is what a schema says of the properties of an object instance.
type kind int

const (
	kindNone   kind = iota // not an object schema (a scalar, an array) or says nothing of properties
	kindAny                // no constraint at all ({} or a description): any object passes
	kindOpen               // an object that admits properties it does not list
	kindClosed             // an object that lists its properties and no others
)

type closer struct {
	doc     map[string]any
	version string
	refs    map[string]kind // memo by $ref; kindNone while being computed (cycles)
	closing []map[string]any
	// absent are the properties and composition members that version does not have yet (or no
	// longer): they become false schemas.
	absent []func()
}

// closeObjects closes the object schemas of doc where they are used (see above), and takes the
// properties and alternatives (oneOf, anyOf) that OpenSearch version has not (x-version-added
// after it, x-version-removed at or before it) out of them: a hybrid query's filter (3.0) is an
// unlisted field to 2.19.
func closeObjects(doc map[string]any, version string) {
	c := &closer{doc: doc, version: version, refs: map[string]kind{}}
	for name, v := range doc {
		if name == "components" {
			comps, _ := v.(map[string]any)
			for cname, cv := range comps {
				if cname == "schemas" {
					schemas, _ := cv.(map[string]any)
					for _, root := range schemas {
						if m, ok := root.(map[string]any); ok {
							c.walk(m, false) // a component closes where it is referenced
						}
					}
					continue
				}
				c.findSchemas(cv)
			}
			continue
		}
		c.findSchemas(v)
	}
	for _, m := range c.closing {
		m["unevaluatedProperties"] = false
	}
	for _, f := range c.absent {
		f()
	}
}

// present reports whether the schema s (or the one its $ref names) exists in c.version.
func (c *closer) present(s map[string]any) bool {
	nodes := []map[string]any{s}
	if ref, ok := s["$ref"].(string); ok {
		if t, ok := lookup(c.doc, ref).(map[string]any); ok {
			nodes = append(nodes, t)
		}
	}
	for _, n := range nodes {
		if !inVersion(n, c.version) {
			return false
		}
	}
	return true
}

// findSchemas descends through the non-schema parts of the document (paths, request bodies,
// parameters, responses) to the schemas they hold.
func (c *closer) findSchemas(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if m, ok := e.(map[string]any); ok && k == "schema" {
				c.walk(m, true)
				continue
			}
			c.findSchemas(e)
		}
	case []any:
		for _, e := range v {
			c.findSchemas(e)
		}
	}
}

// walk visits a schema; standalone is false for the members of a composition and for
// components (both are closed by the schema that uses them).
func (c *closer) walk(s map[string]any, standalone bool) {
	if standalone && !explicit(s) && c.kind(s) == kindClosed {
		c.closing = append(c.closing, s)
	}
	each := func(v any, standalone bool) {
		if m, ok := v.(map[string]any); ok {
			c.walk(m, standalone)
		}
	}
	for _, key := range []string{"properties", "patternProperties"} {
		if props, ok := s[key].(map[string]any); ok {
			closed := c.kind(s) == kindClosed
			for name, p := range props {
				if m, ok := p.(map[string]any); ok && !c.present(m) {
					// In a closed object the field becomes an unlisted one; a false schema
					// there would also fail the object's part that lists it, and with it
					// the other fields that part evaluates.
					if closed && key == "properties" {
						c.absent = append(c.absent, func() { delete(props, name) })
					} else {
						c.absent = append(c.absent, func() { props[name] = false })
					}
					continue
				}
				each(p, true)
			}
		}
	}
	each(s["additionalProperties"], true)
	each(s["items"], true)
	if prefix, ok := s["prefixItems"].([]any); ok {
		for _, p := range prefix {
			each(p, true)
		}
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if members, ok := s[key].([]any); ok {
			for i, m := range members {
				if mm, ok := m.(map[string]any); ok && key != "allOf" && !c.present(mm) {
					c.absent = append(c.absent, func() { members[i] = false })
					continue
				}
				each(m, false)
			}
		}
	}
	for _, key := range []string{"not", "if", "then", "else"} {
		each(s[key], false)
	}
}

// explicit reports whether a schema says itself which unlisted properties it admits.
func explicit(s map[string]any) bool {
	for _, key := range []string{"additionalProperties", "patternProperties", "unevaluatedProperties"} {
		if _, ok := s[key]; ok {
			return true
		}
	}
	return false
}

func (c *closer) kind(s map[string]any) kind {
	if explicit(s) {
		if s["additionalProperties"] == false || s["unevaluatedProperties"] == false {
			return kindClosed
		}
		return kindOpen
	}
	var parts []kind
	if ref, ok := s["$ref"].(string); ok {
		if k := c.refKind(ref); k != kindAny { // as an allOf member
			parts = append(parts, k)
		}
	}
	if _, ok := s["properties"]; ok {
		parts = append(parts, kindClosed)
	}
	if members, ok := s["allOf"].([]any); ok {
		for _, m := range members {
			if mm, ok := m.(map[string]any); ok {
				if k := c.kind(mm); k != kindAny { // an unconstrained member frees nothing
					parts = append(parts, k)
				}
			}
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if members, ok := s[key].([]any); ok {
			for _, m := range members {
				if mm, ok := m.(map[string]any); ok {
					parts = append(parts, c.kind(mm))
				}
			}
		}
	}
	if len(parts) == 0 {
		switch t := s["type"].(type) {
		case string:
			if t == "object" {
				return kindOpen
			}
			return kindNone
		case []any:
			for _, e := range t {
				if e == "object" {
					return kindOpen
				}
			}
			return kindNone
		}
		for _, key := range []string{"enum", "const"} {
			if _, ok := s[key]; ok {
				return kindNone
			}
		}
		return kindAny
	}
	out := kindNone
	for _, k := range parts {
		switch {
		case k == kindOpen || k == kindAny:
			return kindOpen
		case k == kindClosed:
			out = kindClosed
		}
	}
	return out
}

func (c *closer) refKind(ref string) kind {
	if k, ok := c.refs[ref]; ok {
		return k
	}
	c.refs[ref] = kindNone
	target, ok := lookup(c.doc, ref).(map[string]any)
	if !ok || !strings.HasPrefix(ref, "#/") {
		return kindNone
	}
	k := c.kind(target)
	c.refs[ref] = k
	return k
}
