package opensearchlocal

import (
	"strings"
)

// javaClass names a JSON value's Java class the way OpenSearch's mapping errors print it.
func javaClass(v *jv) string {
	switch v.k {
	case kString:
		return "class java.lang.String"
	case kNumber:
		if v.isInt() {
			return "class java.lang.Integer"
		}
		return "class java.lang.Double"
	case kBool:
		return "class java.lang.Boolean"
	case kArray:
		return "class java.util.ArrayList"
	case kNull:
		return "null"
	}
	return "class java.util.LinkedHashMap"
}

// javaValue renders a value as Java's Map/List toString does (used in "unsupported parameters").
func javaValue(v *jv) string {
	switch v.k {
	case kObject:
		parts := make([]string, 0, len(v.obj))
		for _, m := range v.obj {
			parts = append(parts, m.key+"="+javaValue(m.val))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case kArray:
		parts := make([]string, 0, len(v.arr))
		for _, e := range v.arr {
			parts = append(parts, javaValue(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return v.text()
}

// find returns the mapped field at a dotted path (multi-fields included), or nil.
func (m *mapping) find(path string) *field {
	return findIn(m.root.props, path)
}

func findIn(props []*field, path string) *field {
	for _, f := range props {
		if f.name == path {
			return f
		}
		if strings.HasPrefix(path, f.name+".") {
			rest := path[len(f.name)+1:]
			if f.typ == "object" {
				if g := findIn(f.props, rest); g != nil {
					return g
				}
			}
			for _, sub := range f.fields {
				if sub.name == rest {
					return sub
				}
			}
		}
	}
	return nil
}

// render is the mapping as GET /{index} shows it.
func (m *mapping) render() obj {
	o := obj{}
	if m.root.dynamic != "true" {
		o = append(o, kv{"dynamic", m.root.dynamic})
	}
	if m.meta != nil {
		o = append(o, kv{"_meta", m.meta})
	}
	if m.sourceDef != nil {
		o = append(o, kv{"_source", m.sourceDef})
	}
	if !m.dateDetection {
		o = append(o, kv{"date_detection", false})
	}
	if len(m.root.props) > 0 {
		o = append(o, kv{"properties", renderProps(m.root.props)})
	}
	return o
}

func renderProps(fs []*field) obj {
	o := make(obj, 0, len(fs))
	for _, f := range fs {
		o = append(o, kv{f.name, f.render()})
	}
	return o
}

func (f *field) render() obj {
	o := obj{}
	if f.typ != "object" {
		o = append(o, kv{"type", f.typ})
	}
	for _, p := range f.params {
		if p.k == "properties" || p.k == "fields" {
			continue
		}
		o = append(o, p)
	}
	if len(f.fields) > 0 {
		o = append(o, kv{"fields", renderProps(f.fields)})
	}
	if len(f.props) > 0 {
		o = append(o, kv{"properties", renderProps(f.props)})
	}
	return o
}

// clone deep-copies the mapping tree so a document can add dynamic fields without touching the
// index's mapping until it is accepted.
func (f *field) clone() *field {
	g := *f
	g.props = make([]*field, len(f.props))
	for i, p := range f.props {
		g.props[i] = p.clone()
	}
	g.fields = append([]*field(nil), f.fields...)
	g.params = append(obj(nil), f.params...)
	return &g
}
