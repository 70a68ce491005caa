package sam

import (
	"slices"
	"strings"
)

// Match tells which function API Gateway would invoke for a request to the template's HTTP API,
// following the route selection of HTTP APIs: a route of literal segments beats one with path
// variables, which beats a greedy {proxy+} route, which beats $default; between two routes of
// one kind the one with a literal segment further left wins, and on the same path a route for
// the request's method beats ANY. A trailing slash on the request is ignored, as API Gateway
// does. It reports false when no route, not even $default, takes the request.
func (t *Template) Match(method, path string) (logicalID string, r Route, ok bool) {
	method = strings.ToUpper(method)
	path, _, _ = strings.Cut(path, "?")
	req := segments(path)
	type candidate struct {
		id    string
		route Route
		rank  []int // tier, then the kind of each segment, then 1 for ANY; lower wins
	}
	var best *candidate
	var fallback *candidate
	for _, f := range t.Functions() {
		for _, rt := range append(append([]Route(nil), f.Routes...), f.Fallbacks...) {
			if rt.Method != method && rt.Method != "ANY" {
				continue
			}
			if rt.Path == DefaultRoute {
				if fallback == nil {
					fallback = &candidate{id: f.LogicalID, route: rt}
				}
				continue
			}
			tier, kinds, ok := matchPath(segments(rt.Path), req)
			if !ok {
				continue
			}
			c := candidate{id: f.LogicalID, route: rt, rank: append([]int{tier}, kinds...)}
			if rt.Method == "ANY" {
				c.rank = append(c.rank, 1)
			} else {
				c.rank = append(c.rank, 0)
			}
			if best == nil || slices.Compare(c.rank, best.rank) < 0 {
				best = &c
			}
		}
	}
	if best == nil {
		best = fallback
	}
	if best == nil {
		return "", Route{}, false
	}
	return best.id, best.route, true
}

// segments splits a path into its segments, ignoring a trailing slash.
func segments(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// Kinds of route segments, in order of precedence.
const (
	segLiteral = iota
	segVariable
	segGreedy
)

// matchPath matches request segments against a route's. tier is the route's weakest segment kind
// (0 literal route, 1 path variables, 2 greedy); kinds lists the kind of each route segment.
func matchPath(route, req []string) (tier int, kinds []int, ok bool) {
	kinds = make([]int, len(route))
	for i, seg := range route {
		isVar := strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}")
		switch {
		case isVar && strings.HasSuffix(seg, "+}"):
			// A greedy variable is last and takes one or more segments.
			kinds[i] = segGreedy
			return segGreedy, kinds, i == len(route)-1 && len(req) > i
		case i >= len(req):
			return 0, nil, false
		case isVar:
			kinds[i], tier = segVariable, segVariable
		case seg != req[i]:
			return 0, nil, false
		}
	}
	return tier, kinds, len(route) == len(req)
}
