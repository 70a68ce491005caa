package opensearchlocal

import (
	"strings"
)

// sourceFilter is a FetchSourceContext.
type sourceFilter struct {
	off                bool
	includes, excludes []string
}

// parseSourceFilter is FetchSourceContext.fromXContent.
func parseSourceFilter(v *jv) (sourceFilter, *osError) {
	switch v.k {
	case kBool:
		return sourceFilter{off: !v.b}, nil
	case kString:
		return sourceFilter{includes: []string{v.s}}, nil
	case kArray:
		list, ok := stringList(v)
		if !ok {
			return sourceFilter{}, errParsing(v, "Unknown key for a %s in [_source].", v.tokenName())
		}
		return sourceFilter{includes: list}, nil
	case kObject:
		var f sourceFilter
		for _, m := range v.obj {
			list, ok := stringList(m.val)
			if !ok {
				return f, errParsing(m.val, "Unknown key for a %s in [%s].", m.val.tokenName(), m.key)
			}
			switch m.key {
			case "includes", "include":
				f.includes = list
			case "excludes", "exclude":
				f.excludes = list
			default:
				return f, errParsingAtKey(v, m, "Unknown key for a %s in [%s].", m.val.tokenName(), m.key)
			}
		}
		return f, nil
	}
	return sourceFilter{}, errParsing(v, "Expected one of [VALUE_BOOLEAN, VALUE_STRING, START_ARRAY, START_OBJECT] but found [%s]", v.tokenName())
}

// filterSource is XContentMapValues.filter: '*' wildcards on dotted paths; an object on the way
// to an included path is kept with only what is included.
func filterSource(v *jv, includes, excludes []string) *jv {
	out, _ := filterValue(v, "", includes, excludes)
	if out == nil {
		return &jv{k: kObject, src: v.src, obj: []member{}}
	}
	return out
}

func filterValue(v *jv, path string, inc, exc []string) (*jv, bool) {
	switch v.k {
	case kObject:
		out := &jv{k: kObject, src: v.src, obj: []member{}}
		for _, m := range v.obj {
			p := m.key
			if path != "" {
				p = path + "." + m.key
			}
			if matchesAny(exc, p) {
				continue
			}
			subInc := inc
			if len(inc) > 0 && matchesAny(inc, p) {
				subInc = nil
			} else if len(inc) > 0 && !mayMatchBelow(inc, p) {
				continue
			}
			if m.val.k == kObject || (m.val.k == kArray && hasObjects(m.val)) {
				if fv, ok := filterValue(m.val, p, subInc, exc); ok {
					out.obj = append(out.obj, member{key: m.key, val: fv})
				}
				continue
			}
			if subInc != nil {
				continue // a leaf that only an include below it could have matched
			}
			out.obj = append(out.obj, member{key: m.key, val: m.val})
		}
		return out, len(out.obj) > 0 || len(inc) == 0
	case kArray:
		out := &jv{k: kArray, src: v.src, arr: []*jv{}}
		for _, e := range v.arr {
			if e.k == kObject {
				if fv, ok := filterValue(e, path, inc, exc); ok {
					out.arr = append(out.arr, fv)
				}
			} else if len(inc) == 0 {
				out.arr = append(out.arr, e)
			}
		}
		return out, len(out.arr) > 0 || len(inc) == 0
	}
	return v, true
}

func hasObjects(v *jv) bool {
	for _, e := range v.arr {
		if e.k == kObject {
			return true
		}
	}
	return false
}

func matchesAny(patterns []string, path string) bool {
	for _, p := range patterns {
		if globMatch(p, path) || strings.HasPrefix(path, p+".") {
			return true
		}
	}
	return false
}

// mayMatchBelow reports whether some include pattern could match a path under prefix.
func mayMatchBelow(patterns []string, prefix string) bool {
	pre := prefix + "."
	for _, p := range patterns {
		lit := p
		if i := strings.IndexByte(p, '*'); i >= 0 {
			lit = p[:i]
			if strings.HasPrefix(pre, lit) || strings.HasPrefix(lit, pre) {
				return true
			}
			continue
		}
		if strings.HasPrefix(lit, pre) {
			return true
		}
	}
	return false
}
