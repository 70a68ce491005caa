package opensearchlocal

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// Version is the OpenSearch version the stand-in reports on GET / (the deployed domain's,
// template.yaml: OpenSearch_2.19).
const Version = "2.19.0"

const (
	luceneVersion = "9.12.1"
	clusterName   = "opensearchlocal"
	nodeName      = "opensearchlocal-node"
	nodeID        = "b2NhbC1ub2RlLWlkAAAAAA"
	maxBodyBytes  = 100 << 20 // http.max_content_length
)

// Options configure a Server.
type Options struct {
	// RefreshTick is how often periodic refreshes are checked (default 50ms); tests of the
	// refresh interval itself may lower it.
	RefreshTick time.Duration
}

// Server is the stand-in: an http.Handler holding every index in memory. It is safe for
// concurrent use. Close stops its periodic refresher.
type Server struct {
	mu          sync.RWMutex
	indices     map[string]*index
	pipelines   map[string]*pipeline
	clusterUUID string
	stop        chan struct{}
	done        chan struct{}
	closeOnce   sync.Once
}

// New returns a running stand-in with no indices.
func New(opts Options) *Server {
	if opts.RefreshTick <= 0 {
		opts.RefreshTick = 50 * time.Millisecond
	}
	s := &Server{
		indices:     map[string]*index{},
		pipelines:   map[string]*pipeline{},
		clusterUUID: randomID(16),
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	go s.refresher(opts.RefreshTick)
	return s
}

// Close stops the periodic refresher; requests still in flight finish.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
		s.mu.RLock()
		defer s.mu.RUnlock()
		for _, ix := range s.indices {
			ix.close()
		}
	})
}

// refresher runs the periodic refresh of every index (index.refresh_interval).
func (s *Server) refresher(tick time.Duration) {
	defer close(s.done)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.mu.RLock()
			list := make([]*index, 0, len(s.indices))
			for _, ix := range s.indices {
				list = append(list, ix)
			}
			s.mu.RUnlock()
			for _, ix := range list {
				ix.scheduledRefresh(now)
			}
		}
	}
}

// randomID returns n random bytes as URL-safe base64 (OpenSearch's ids and uuids look alike).
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// request is one decoded REST call.
type request struct {
	w      http.ResponseWriter
	r      *http.Request
	path   string
	params url.Values
	body   []byte
	start  time.Time
}

// route is one endpoint of the slice.
type route struct {
	methods []string
	handle  func(s *Server, q *request, args []string)
	params  []string // query parameters the endpoint implements (besides the global ones)
	ignored []string // parameters accepted and ignored (timeouts, cluster-manager settings)
	other   []string // parameters OpenSearch accepts there that the stand-in does not implement
}

// Global parameters every OpenSearch endpoint accepts.
var globalParams = []string{"pretty", "human", "error_trace"}

// ServeHTTP dispatches a REST call.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		// A panic is a bug of the stand-in: answer like OpenSearch answers an internal failure, and
		// say whose failure it is.
		if v := recover(); v != nil {
			writeJSON(w, r, http.StatusInternalServerError, (&osError{typ: "exception", reason: fmt.Sprintf("opensearchlocal: internal error: %v", v),
				status: http.StatusInternalServerError, plain: true}).body())
		}
	}()
	q := &request{w: w, r: r, path: r.URL.EscapedPath(), params: r.URL.Query(), start: time.Now()}
	segs, err := splitPath(q.path)
	if err != nil {
		writeError(w, r, errIllegalArgument("%v", err))
		return
	}
	rt, args, allowed := match(segs, r.Method)
	if rt == nil {
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ","))
			writeSimpleError(w, r, http.StatusMethodNotAllowed,
				fmt.Sprintf("Incorrect HTTP method for uri [%s] and method [%s], allowed: [%s]", r.URL.RequestURI(), r.Method, strings.Join(allowed, ", ")), true)
			return
		}
		// RestController.handleBadRequest: a plain message, no status field.
		writeJSON(w, r, http.StatusBadRequest, obj{{"error", fmt.Sprintf("no handler found for uri [%s] and method [%s]", r.URL.RequestURI(), r.Method)}})
		return
	}
	if e := checkParams(q, rt); e != nil {
		writeError(w, r, e)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		writeError(w, r, errParse("failed to read the request body: %v", err))
		return
	}
	if len(body) > maxBodyBytes {
		writeSimpleError(w, r, http.StatusRequestEntityTooLarge, "Request Entity Too Large", false)
		return
	}
	if len(body) > 0 {
		if msg := checkContentType(r.Header.Get("Content-Type")); msg != "" {
			writeSimpleError(w, r, http.StatusNotAcceptable, msg, true)
			return
		}
	}
	q.body = body
	rt.handle(s, q, args)
}

func checkContentType(ct string) string {
	if ct == "" {
		return "Content-Type header is missing"
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "Content-Type header [" + ct + "] is not supported"
	}
	switch mt {
	case "application/json", "application/x-ndjson", "application/vnd.opensearch+json":
		return ""
	case "application/yaml", "application/cbor", "application/smile":
		return "Content-Type header [" + ct + "] is not supported by the local stand-in (JSON only)"
	}
	return "Content-Type header [" + ct + "] is not supported"
}

func splitPath(p string) ([]string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil, nil
	}
	raw := strings.Split(p, "/")
	out := make([]string, 0, len(raw))
	for _, s := range raw {
		if s == "" {
			continue
		}
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, fmt.Errorf("invalid escape in path segment [%s]", s)
		}
		out = append(out, u)
	}
	return out, nil
}

// routes lists the slice. Patterns: literal segments, or "{}" for a variable one. Parameter lists
// come from the OpenSearch API specification's operations.
var routes = []struct {
	pattern []string
	rt      route
}{
	{nil, route{methods: []string{"GET", "HEAD"}, handle: (*Server).handleInfo}},
	{[]string{"_bulk"}, route{methods: []string{"POST", "PUT"}, handle: (*Server).handleBulk,
		params: []string{"refresh", "_source", "_source_excludes", "_source_includes", "require_alias", "routing"}, ignored: []string{"timeout", "wait_for_active_shards"},
		other: []string{"index", "pipeline", "type"}}},
	{[]string{"_refresh"}, route{methods: []string{"GET", "POST"}, handle: (*Server).handleRefresh,
		params: []string{"ignore_unavailable"}, ignored: []string{"allow_no_indices", "expand_wildcards"}}},
	{[]string{"_count"}, route{methods: []string{"GET", "POST"}, handle: (*Server).handleCount,
		params: []string{"ignore_unavailable"}, ignored: []string{"allow_no_indices", "expand_wildcards"}, other: countOther}},
	{[]string{"_search"}, route{methods: []string{"GET", "POST"}, handle: (*Server).handleSearch,
		params: searchParams, ignored: searchIgnored, other: searchOther}},
	{[]string{"_search", "pipeline", "{}"}, route{methods: []string{"PUT", "GET", "DELETE"}, handle: (*Server).handlePipeline,
		ignored: []string{"cluster_manager_timeout", "master_timeout", "timeout"}}},
	{[]string{"{}"}, route{methods: []string{"PUT", "GET", "HEAD", "DELETE"}, handle: (*Server).handleIndex,
		params: []string{"flat_settings", "ignore_unavailable"}, ignored: []string{"cluster_manager_timeout", "master_timeout", "timeout", "wait_for_active_shards", "allow_no_indices", "expand_wildcards", "include_defaults", "local"}}},
	{[]string{"{}", "_doc"}, route{methods: []string{"POST"}, handle: (*Server).handleDoc,
		params: docParams, ignored: []string{"timeout", "wait_for_active_shards"}, other: docOther}},
	{[]string{"{}", "_doc", "{}"}, route{methods: []string{"PUT", "POST"}, handle: (*Server).handleDoc,
		params: docParams, ignored: []string{"timeout", "wait_for_active_shards"}, other: docOther}},
	{[]string{"{}", "_doc", "{}"}, route{methods: []string{"GET", "HEAD"}, handle: (*Server).handleGetDoc,
		params: []string{"_source", "_source_includes", "_source_excludes", "realtime", "refresh"}, ignored: []string{"preference", "routing"},
		other: []string{"stored_fields", "version", "version_type"}}},
	{[]string{"{}", "_doc", "{}"}, route{methods: []string{"DELETE"}, handle: (*Server).handleDeleteDoc,
		params: []string{"refresh", "if_seq_no", "if_primary_term"}, ignored: []string{"timeout", "wait_for_active_shards", "routing"},
		other: []string{"version", "version_type"}}},
	{[]string{"{}", "_bulk"}, route{methods: []string{"POST", "PUT"}, handle: (*Server).handleBulk,
		params: []string{"refresh", "_source", "_source_excludes", "_source_includes", "require_alias", "routing"}, ignored: []string{"timeout", "wait_for_active_shards"},
		other: []string{"pipeline", "type"}}},
	{[]string{"{}", "_search"}, route{methods: []string{"GET", "POST"}, handle: (*Server).handleSearch,
		params: searchParams, ignored: searchIgnored, other: searchOther}},
	{[]string{"{}", "_count"}, route{methods: []string{"GET", "POST"}, handle: (*Server).handleCount,
		params: []string{"ignore_unavailable"}, ignored: []string{"allow_no_indices", "expand_wildcards"}, other: countOther}},
	{[]string{"{}", "_delete_by_query"}, route{methods: []string{"POST"}, handle: (*Server).handleDeleteByQuery,
		params: []string{"refresh", "conflicts", "max_docs", "ignore_unavailable", "wait_for_completion"}, ignored: []string{"timeout", "wait_for_active_shards", "allow_no_indices", "expand_wildcards", "scroll", "scroll_size", "search_timeout", "requests_per_second", "slices"},
		other: []string{"_source", "_source_excludes", "_source_includes", "analyze_wildcard", "analyzer", "default_operator", "df", "from", "lenient", "preference", "q", "request_cache", "routing", "search_type", "size", "sort", "stats", "terminate_after", "version"}}},
	{[]string{"{}", "_refresh"}, route{methods: []string{"GET", "POST"}, handle: (*Server).handleRefresh,
		params: []string{"ignore_unavailable"}, ignored: []string{"allow_no_indices", "expand_wildcards"}}},
}

var (
	docParams     = []string{"refresh", "op_type", "if_seq_no", "if_primary_term", "require_alias"}
	docOther      = []string{"pipeline", "routing", "version", "version_type"}
	searchParams  = []string{"size", "from", "_source", "_source_includes", "_source_excludes", "track_total_hits", "search_pipeline", "ignore_unavailable", "seq_no_primary_term", "version", "include_named_queries_score"}
	searchIgnored = []string{"timeout", "allow_no_indices", "expand_wildcards", "allow_partial_search_results", "batched_reduce_size", "ccs_minimize_roundtrips", "max_concurrent_shard_requests", "pre_filter_shard_size", "request_cache", "cancel_after_time_interval", "phase_took"}
	searchOther   = []string{"analyze_wildcard", "analyzer", "default_operator", "df", "docvalue_fields", "explain", "ignore_throttled", "index", "lenient",
		"preference", "q", "rest_total_hits_as_int", "routing", "scroll", "search_type", "sort", "stats", "stored_fields", "suggest_field", "suggest_mode",
		"suggest_size", "suggest_text", "terminate_after", "track_scores", "typed_keys", "verbose_pipeline", "filter_path", "source"}
	countOther = []string{"analyze_wildcard", "analyzer", "default_operator", "df", "ignore_throttled", "lenient", "min_score", "preference", "q", "routing", "terminate_after"}
)

func match(segs []string, method string) (*route, []string, []string) {
	var allowed []string
	for i := range routes {
		p := routes[i].pattern
		if len(p) != len(segs) {
			continue
		}
		var args []string
		ok := true
		for j, ps := range p {
			if ps == "{}" {
				// Index names cannot start with "_": such a first segment is an endpoint, never an
				// index (except the _all expression).
				if j == 0 && strings.HasPrefix(segs[j], "_") && segs[j] != "_all" {
					ok = false
					break
				}
				args = append(args, segs[j])
			} else if ps != segs[j] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		for _, m := range routes[i].rt.methods {
			if m == method {
				return &routes[i].rt, args, nil
			}
		}
		allowed = append(allowed, routes[i].rt.methods...)
	}
	return nil, nil, allowed
}

// checkParams enforces OpenSearch's "contains unrecognized parameter" rule, and rejects the
// parameters OpenSearch knows but the stand-in does not implement.
func checkParams(q *request, rt *route) *osError {
	known := append(append(append(append([]string{}, globalParams...), rt.params...), rt.ignored...), rt.other...)
	var unknown []string
	for k := range q.params {
		switch {
		case contains(globalParams, k) || contains(rt.params, k) || contains(rt.ignored, k):
		case contains(rt.other, k) || k == "filter_path" || k == "source":
			return errUnsupported("the query parameter [%s] on [%s %s]", k, q.r.Method, q.path)
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	var b strings.Builder
	plural := ""
	if len(unknown) > 1 {
		plural = "s"
	}
	fmt.Fprintf(&b, "request [%s] contains unrecognized parameter%s: ", q.path, plural)
	for i, u := range unknown {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("[" + u + "]")
		b.WriteString(strings.Replace(didYouMean(u, known, 0.5), " did you mean", " -> did you mean", 1))
	}
	return errIllegalArgument("%s", b.String())
}

// boolParam reads a boolean query parameter ("" and "true" are true).
func (q *request) boolParam(name string, def bool) (bool, *osError) {
	if !q.params.Has(name) {
		return def, nil
	}
	switch v := q.params.Get(name); v {
	case "", "true":
		return true, nil
	case "false":
		return false, nil
	default:
		return false, errIllegalArgument("Failed to parse value [%s] as only [true] or [false] are allowed.", v)
	}
}

// handleInfo serves GET and HEAD /. HEAD gets GET's headers (JSON, its length) and no body,
// as OpenSearch's HTTP layer answers HEAD; net/http drops the body of a HEAD answer.
func (s *Server) handleInfo(q *request, _ []string) {
	writeJSON(q.w, q.r, http.StatusOK, obj{
		{"name", nodeName},
		{"cluster_name", clusterName},
		{"cluster_uuid", s.clusterUUID},
		{"version", obj{
			{"distribution", "opensearch"},
			{"number", Version},
			{"build_type", "tar"},
			{"build_hash", "opensearchlocal"},
			{"build_date", "2025-02-11T00:00:00.000000000Z"},
			{"build_snapshot", false},
			{"lucene_version", luceneVersion},
			{"minimum_wire_compatibility_version", "7.10.0"},
			{"minimum_index_compatibility_version", "7.0.0"},
		}},
		{"tagline", "The OpenSearch Project: https://opensearch.org/"},
	})
}

// resolve expands an index expression (comma list, wildcards, _all) to existing indices. A
// missing concrete name is index_not_found unless ignoreUnavailable.
func (s *Server) resolve(expr string, ignoreUnavailable bool) ([]*index, *osError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*index
	seen := map[string]bool{}
	add := func(ix *index) {
		if !seen[ix.name] {
			seen[ix.name] = true
			out = append(out, ix)
		}
	}
	for _, part := range strings.Split(expr, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "":
		case part == "_all" || part == "*":
			for _, ix := range s.sortedIndices() {
				add(ix)
			}
		case strings.Contains(part, "*"):
			for _, ix := range s.sortedIndices() {
				if globMatch(part, ix.name) {
					add(ix)
				}
			}
		default:
			ix := s.indices[part]
			if ix == nil {
				if ignoreUnavailable {
					continue
				}
				return nil, errIndexNotFound(part)
			}
			add(ix)
		}
	}
	return out, nil
}

func (s *Server) sortedIndices() []*index {
	names := make([]string, 0, len(s.indices))
	for n := range s.indices {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*index, len(names))
	for i, n := range names {
		out[i] = s.indices[n]
	}
	return out
}

// globMatch is OpenSearch's Regex.simpleMatch: '*' matches any run of characters.
func globMatch(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == s
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i := 1; i < len(parts)-1; i++ {
		j := strings.Index(s, parts[i])
		if j < 0 {
			return false
		}
		s = s[j+len(parts[i]):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

func tookMillis(start time.Time) int64 { return time.Since(start).Milliseconds() }
