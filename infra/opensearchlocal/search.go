package opensearchlocal

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// searchReq is the slice of SearchSourceBuilder the stand-in implements.
type searchReq struct {
	query            query
	from, size       int
	source           sourceFilter
	trackTotal       int  // -1: exact; n: count up to n
	trackTotalOff    bool // track_total_hits: false (or -1)
	minScore         *float32
	version          bool
	seqNoPrimaryTerm bool
}

// searchSourceKeys are SearchSourceBuilder's other keys (valid in OpenSearch, outside the slice).
var searchSourceKeys = []string{"terminate_after", "explain", "track_scores", "stored_fields", "docvalue_fields", "post_filter", "sort",
	"aggs", "aggregations", "highlight", "suggest", "rescore", "stats", "ext", "collapse", "slice", "search_after", "profile",
	"script_fields", "indices_boost", "pit", "search_pipeline", "verbose_pipeline", "derived", "fields", "point_in_time"}

// parseSearchBody reads a _search body (SearchSourceBuilder.parseXContent).
func parseSearchBody(body []byte, q *request) (*searchReq, *osError) {
	req := &searchReq{size: 10, trackTotal: 10000}
	if len(strings.TrimSpace(string(body))) > 0 {
		v, err := parseJSON(body)
		if err != nil {
			return nil, errJSON(body, err)
		}
		if v.k != kObject {
			return nil, errParsing(v, "Expected [START_OBJECT] but found [%s]", v.tokenName())
		}
		for _, m := range v.obj {
			if e := req.readKey(v, m); e != nil {
				return nil, e
			}
		}
	}
	if e := req.readParams(q); e != nil {
		return nil, e
	}
	if req.size < 0 {
		return nil, errIllegalArgument("[size] parameter cannot be negative, found [%d]", req.size)
	}
	if req.from < 0 {
		return nil, errIllegalArgument("[from] parameter cannot be negative, found [%d]", req.from)
	}
	return req, nil
}

func (req *searchReq) readKey(parent *jv, m member) *osError {
	intVal := func() (int, *osError) {
		n, ok := m.val.int()
		if !ok || n > math.MaxInt32 || n < math.MinInt32 {
			return 0, errParsing(m.val, "[%s] failed to parse: expected an integer, found [%s]", m.key, m.val.text())
		}
		return int(n), nil
	}
	boolVal := func() (bool, *osError) {
		b, ok := m.val.boolean()
		if !ok {
			return false, errBoolValue(m.val)
		}
		return b, nil
	}
	var e *osError
	switch m.key {
	case "query":
		req.query, e = parseQuery(m.val)
	case "from":
		req.from, e = intVal()
	case "size":
		req.size, e = intVal()
	case "_source":
		req.source, e = parseSourceFilter(m.val)
	case "track_total_hits":
		if m.val.k == kBool {
			req.trackTotal, req.trackTotalOff = -1, !m.val.b
			return nil
		}
		n, ie := intVal()
		if ie != nil {
			return ie
		}
		return req.setTrackTotal(n)
	case "min_score":
		f, ok := m.val.float()
		if !ok {
			return errParsing(m.val, "[min_score] failed to parse: expected a number, found [%s]", m.val.text())
		}
		f32 := float32(f)
		req.minScore = &f32
	case "version":
		req.version, e = boolVal()
	case "seq_no_primary_term":
		req.seqNoPrimaryTerm, e = boolVal()
	case "timeout":
		// a single in-memory shard never times out
	case "include_named_queries_score":
		return errUnsupported("include_named_queries_score")
	default:
		if contains(searchSourceKeys, m.key) {
			return errUnsupported("the search body key [%s]", m.key)
		}
		return errParsingAtKey(parent, m, "Unknown key for a %s in [%s].", m.val.tokenName(), m.key)
	}
	return e
}

// setTrackTotal reads an integer track_total_hits (-1 disables counting).
func (req *searchReq) setTrackTotal(n int) *osError {
	if n < -1 {
		return errIllegalArgument("[track_total_hits] parameter must be positive or equals to -1, got %d", n)
	}
	if n == -1 {
		req.trackTotalOff = true
		return nil
	}
	req.trackTotal, req.trackTotalOff = n, false
	return nil
}

func (req *searchReq) readParams(q *request) *osError {
	p := q.params
	for _, k := range []string{"size", "from"} {
		if p.Has(k) {
			n, err := strconv.Atoi(p.Get(k))
			if err != nil {
				return errIllegalArgument("Failed to parse int parameter [%s] with value [%s]", k, p.Get(k))
			}
			if k == "size" {
				req.size = n
			} else {
				req.from = n
			}
		}
	}
	if p.Has("track_total_hits") {
		switch v := p.Get("track_total_hits"); v {
		case "true", "":
			req.trackTotal, req.trackTotalOff = -1, false
		case "false":
			req.trackTotalOff = true
		default:
			n, err := strconv.Atoi(v)
			if err != nil {
				return errIllegalArgument("Failed to parse int parameter [track_total_hits] with value [%s]", v)
			}
			if e := req.setTrackTotal(n); e != nil {
				return e
			}
		}
	}
	sourceParams(p, &req.source)
	for _, k := range []string{"version", "seq_no_primary_term"} {
		b, e := q.boolParam(k, false)
		if e != nil {
			return e
		}
		if b && k == "version" {
			req.version = true
		} else if b {
			req.seqNoPrimaryTerm = true
		}
	}
	if p.Has("include_named_queries_score") {
		return errUnsupported("include_named_queries_score")
	}
	return nil
}

// scoredHit is one matching document of one index.
type scoredHit struct {
	ix    *index
	ixPos int
	d     *doc
	score float32
	names []string
}

// shardResult is one index's part of a search: its best hits in answer order, and how many
// documents matched.
type shardResult struct {
	hits  []scoredHit
	total int
}

// searchIndex evaluates a query on one index's snapshot, keeping the best keep hits (every hit
// when keep < 0).
func searchIndex(ix *index, pos int, q query, minScore *float32, keep int, now time.Time) (shardResult, *osError) {
	snap, m := ix.searcher(now)
	ctx := &shardCtx{ix: ix, snap: snap, m: m}
	if q == nil {
		q = &qMatchAll{boost: 1}
	}
	mt, e := ctx.bind(q)
	if e != nil {
		return shardResult{}, e
	}
	var res shardResult
	top := newTopK(keep)
	var names []string // one variable for the scan; a kept hit's names get their own array
	for _, d := range snap.docs {
		names = nil
		s, ok := mt.match(d, &names)
		if !ok {
			continue
		}
		if minScore != nil && s < *minScore {
			continue
		}
		res.total++
		top.offer(scoredHit{ix: ix, ixPos: pos, d: d, score: s, names: names})
	}
	res.hits = top.result()
	return res, nil
}

// handleSearch serves /_search and /{index}/_search.
func (s *Server) handleSearch(q *request, args []string) {
	start := time.Now()
	expr := "_all"
	if len(args) > 0 {
		expr = args[0]
	}
	req, e := parseSearchBody(q.body, q)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	var pl *pipeline
	if name := q.params.Get("search_pipeline"); name != "" && name != "_none" {
		s.mu.RLock()
		pl = s.pipelines[name]
		s.mu.RUnlock()
		if pl == nil {
			writeError(q.w, q.r, errIllegalArgument("Pipeline %s is not defined", name))
			return
		}
	}
	ignore, e := q.boolParam("ignore_unavailable", false)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	ixs, e := s.resolve(expr, ignore)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	for _, ix := range ixs {
		if req.from+req.size > ix.maxResultWindow {
			writeError(q.w, q.r, searchPhaseFailure([]shardFailure{{index: ix.name, indexUUID: ix.uuid, cause: errIllegalArgument(
				"Result window is too large, from + size must be less than or equal to: [%d] but was [%d]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting.",
				ix.maxResultWindow, req.from+req.size)}}))
			return
		}
	}
	now := time.Now()
	var hits []scoredHit
	var failures []shardFailure
	total := 0
	hybrid, isHybrid := req.query.(*qHybrid)
	if isHybrid {
		if pl == nil || pl.phase == nil {
			writeError(q.w, q.r, errUnsupported("a hybrid query without a search pipeline holding a normalization-processor or score-ranker-processor"))
			return
		}
		var err *osError
		hits, total, failures, err = runHybrid(ixs, hybrid, req, pl.phase, now)
		if err != nil {
			writeError(q.w, q.r, err)
			return
		}
	} else {
		for pos, ix := range ixs {
			res, e := searchIndex(ix, pos, req.query, req.minScore, req.from+req.size, now)
			if e != nil {
				failures = append(failures, shardFailure{index: ix.name, indexUUID: ix.uuid, cause: e})
				continue
			}
			hits = append(hits, res.hits...)
			total += res.total
		}
		sortHits(hits)
	}
	if len(failures) > 0 && len(failures) == len(ixs) {
		writeError(q.w, q.r, searchPhaseFailure(failures))
		return
	}
	writeJSON(q.w, q.r, http.StatusOK, renderSearch(req, ixs, hits, total, failures, start))
}

// searchPhaseFailure is the error of a search that failed on every shard.
func searchPhaseFailure(fs []shardFailure) *osError {
	return &osError{typ: "search_phase_execution_exception", reason: "all shards failed", shards: fs, status: fs[0].cause.httpStatus()}
}

func shardsObj(ixs []*index, failures []shardFailure) obj {
	total := 0
	for _, ix := range ixs {
		total += ix.shards
	}
	o := obj{{"total", total}, {"successful", total - len(failures)}, {"skipped", 0}, {"failed", len(failures)}}
	if len(failures) > 0 {
		fs := make([]obj, 0, len(failures))
		for _, f := range failures {
			fs = append(fs, obj{{"shard", 0}, {"index", f.index}, {"node", nodeID}, {"reason", f.cause.render(true)}})
		}
		o = append(o, kv{"failures", fs})
	}
	return o
}

func renderSearch(req *searchReq, ixs []*index, hits []scoredHit, total int, failures []shardFailure, start time.Time) obj {
	var maxScore any // null when no hit is returned: OpenSearch collects no scores for size 0
	if len(hits) > 0 && req.size > 0 {
		maxScore = score(hits[0].score)
	}
	page := []obj{}
	for i := req.from; i < len(hits) && i < req.from+req.size; i++ {
		page = append(page, renderHit(req, hits[i]))
	}
	h := obj{}
	if !req.trackTotalOff {
		rel := "eq"
		v := total
		if req.trackTotal >= 0 && total > req.trackTotal {
			v, rel = req.trackTotal, "gte"
		}
		h = append(h, kv{"total", obj{{"value", v}, {"relation", rel}}})
	}
	h = append(h, kv{"max_score", maxScore}, kv{"hits", page})
	return obj{{"took", tookMillis(start)}, {"timed_out", false}, {"_shards", shardsObj(ixs, failures)}, {"hits", h}}
}

func renderHit(req *searchReq, h scoredHit) obj {
	o := obj{{"_index", h.ix.name}, {"_id", h.d.id}}
	if req.version {
		o = append(o, kv{"_version", h.d.version})
	}
	if req.seqNoPrimaryTerm {
		o = append(o, kv{"_seq_no", h.d.seqNo}, kv{"_primary_term", 1})
	}
	o = append(o, kv{"_score", score(h.score)})
	if !req.source.off && h.d.source.raw != nil {
		if len(req.source.includes) > 0 || len(req.source.excludes) > 0 {
			o = append(o, kv{"_source", filterSource(h.d.source.parsed(), req.source.includes, req.source.excludes)})
		} else {
			o = append(o, kv{"_source", rawJSON(h.d.source.bytes())})
		}
	}
	if len(h.names) > 0 {
		o = append(o, kv{"matched_queries", dedup(h.names)})
	}
	return o
}

// rawJSON embeds stored bytes verbatim (OpenSearch returns _source as it was indexed).
type rawJSON []byte

// MarshalJSON returns the bytes as they are.
func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

func dedup(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
