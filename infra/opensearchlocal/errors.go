package opensearchlocal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
)

// osError is one exception as OpenSearch's REST layer renders it:
// {"error":{"root_cause":[…],"type":…,"reason":…,<metadata>,"caused_by":…},"status":…}.
type osError struct {
	typ    string
	reason string
	meta   obj      // fields after type and reason (index, index_uuid, line, col, …)
	cause  *osError // rendered as caused_by
	// plain marks a plain Java exception (illegal_argument_exception, number_format_exception, …)
	// rather than an OpenSearchException: OpenSearch's root-cause guess stops above such a cause.
	plain  bool
	status int
	shards []shardFailure // search_phase_execution_exception's failed_shards
}

// shardFailure is one entry of failed_shards (a search that failed on the shard).
type shardFailure struct {
	index, indexUUID string
	cause            *osError
}

func (e *osError) Error() string { return e.typ + ": " + e.reason }

// withCause sets the caused_by chain and returns e.
func (e *osError) withCause(c *osError) *osError { e.cause = c; return e }

// rootCauses follows OpenSearchException.guessRootCauses.
func (e *osError) rootCauses() []*osError {
	if len(e.shards) > 0 {
		var out []*osError
		seen := map[string]bool{}
		for _, f := range e.shards {
			for _, rc := range f.cause.rootCauses() {
				key := rc.typ + "\x00" + rc.reason + "\x00" + f.index
				if !seen[key] {
					seen[key] = true
					out = append(out, rc)
				}
			}
		}
		return out
	}
	if e.plain {
		return []*osError{e}
	}
	cur := e
	for cur.cause != nil && !cur.cause.plain {
		cur = cur.cause
	}
	return []*osError{cur}
}

// render writes the exception's object; root causes skip their cause.
func (e *osError) render(withCause bool) obj {
	o := obj{{"type", e.typ}, {"reason", e.reason}}
	o = append(o, e.meta...)
	if len(e.shards) > 0 {
		fs := make([]obj, 0, len(e.shards))
		for _, f := range e.shards {
			fs = append(fs, obj{{"shard", 0}, {"index", f.index}, {"node", nodeID}, {"reason", f.cause.render(true)}})
		}
		o = append(o, kv{"phase", "query"}, kv{"grouped", true}, kv{"failed_shards", fs})
	}
	if withCause && e.cause != nil {
		o = append(o, kv{"caused_by", e.cause.render(true)})
	}
	return o
}

// body is the full error response body.
func (e *osError) body() obj {
	var rcs []obj
	for _, rc := range e.rootCauses() {
		rcs = append(rcs, rc.render(false))
	}
	inner := append(obj{{"root_cause", rcs}}, e.render(true)...)
	return obj{{"error", inner}, {"status", e.httpStatus()}}
}

func (e *osError) httpStatus() int {
	if e.status != 0 {
		return e.status
	}
	return http.StatusBadRequest
}

// Constructors for the exceptions the stand-in raises, with OpenSearch's wording.

func errIllegalArgument(format string, a ...any) *osError {
	return &osError{typ: "illegal_argument_exception", reason: fmt.Sprintf(format, a...), plain: true}
}

// errUnsupported rejects something OpenSearch would accept but the stand-in does not implement.
// It is a 400 illegal_argument_exception whose reason names the stand-in, so that nobody mistakes
// it for OpenSearch's own verdict.
func errUnsupported(format string, a ...any) *osError {
	return errIllegalArgument("opensearchlocal: "+format+" is outside the local stand-in's slice of OpenSearch (see infra/opensearchlocal/doc.go)", a...)
}

// errParsing is a ParsingException with OpenSearch's line and col metadata.
func errParsing(at *jv, format string, a ...any) *osError {
	e := &osError{typ: "parsing_exception", reason: fmt.Sprintf(format, a...)}
	if at != nil {
		l, c := lineCol(at.src, at.off)
		e.meta = obj{{"line", l}, {"col", c}}
	}
	return e
}

// errParsingAtKey is errParsing positioned at an object key.
func errParsingAtKey(parent *jv, m member, format string, a ...any) *osError {
	e := &osError{typ: "parsing_exception", reason: fmt.Sprintf(format, a...)}
	l, c := lineCol(parent.src, m.keyOff)
	e.meta = obj{{"line", l}, {"col", c}}
	return e
}

// errXContent is an XContentParseException: its reason starts with "[line:col]".
func errXContent(pos, format string, a ...any) *osError {
	return &osError{typ: "x_content_parse_exception", reason: pos + " " + fmt.Sprintf(format, a...), plain: true}
}

// errUnknownField is ObjectParser's rejection of an unknown field, with its suggestions.
func errUnknownField(parent *jv, m member, parser string, known []string) *osError {
	return errXContent(m.keyPos(parent), "[%s] unknown field [%s]%s", parser, m.key, didYouMean(m.key, known, 0.5))
}

func errJSON(src []byte, err error) *osError {
	var je *jsonError
	if !errors.As(err, &je) {
		return &osError{typ: "json_parse_exception", reason: err.Error(), plain: true}
	}
	l, c := lineCol(src, je.off)
	return &osError{typ: "json_parse_exception",
		reason: fmt.Sprintf("%s\n at [Source: (byte[])%q; line: %d, column: %d]", je.msg, truncate(string(src), 500), l, c), plain: true}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "[truncated " + strconv.Itoa(len(s)-n) + " chars]"
}

func errIndexNotFound(name string) *osError {
	return &osError{typ: "index_not_found_exception", reason: "no such index [" + name + "]", status: http.StatusNotFound,
		meta: obj{{"index", name}, {"resource.id", name}, {"resource.type", "index_or_alias"}, {"index_uuid", "_na_"}}}
}

func errIndexExists(name, uuid string) *osError {
	return &osError{typ: "resource_already_exists_exception", reason: "index [" + name + "/" + uuid + "] already exists",
		meta: obj{{"index", name}, {"index_uuid", uuid}}}
}

func errInvalidIndexName(name, why string) *osError {
	return &osError{typ: "invalid_index_name_exception", reason: "Invalid index name [" + name + "], " + why,
		meta: obj{{"index", name}, {"index_uuid", "_na_"}}}
}

func errMapperParsing(format string, a ...any) *osError {
	return &osError{typ: "mapper_parsing_exception", reason: fmt.Sprintf(format, a...)}
}

func errParse(format string, a ...any) *osError {
	return &osError{typ: "parse_exception", reason: fmt.Sprintf(format, a...)}
}

func errValidation(msgs ...string) *osError {
	var b bytes.Buffer
	b.WriteString("Validation Failed: ")
	for i, m := range msgs {
		fmt.Fprintf(&b, "%d: %s;", i+1, m)
	}
	return &osError{typ: "action_request_validation_exception", reason: b.String()}
}

// inShard attaches the index metadata that exceptions raised on a shard carry.
func (e *osError) inShard(ix *index) *osError {
	e.meta = append(e.meta, kv{"index", ix.name}, kv{"shard", "0"}, kv{"index_uuid", ix.uuid})
	return e
}

// writeError writes an OpenSearch error response.
func writeError(w http.ResponseWriter, r *http.Request, e *osError) {
	writeJSON(w, r, e.httpStatus(), e.body())
}

// writeSimpleError writes the string-form errors of OpenSearch's REST controller
// ({"error":"…","status":…}).
func writeSimpleError(w http.ResponseWriter, r *http.Request, status int, msg string, withStatus bool) {
	o := obj{{"error", msg}}
	if withStatus {
		o = append(o, kv{"status", status})
	}
	writeJSON(w, r, status, o)
}

// writeHead answers an existence check (HEAD): a status, JSON's content type and no body.
func writeHead(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(status)
}

// writeJSON encodes v; ?pretty indents it as OpenSearch does.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Every response is built from plain values; a failure here is a bug in the stand-in.
		b, _ = json.Marshal(errIllegalArgument("opensearchlocal: cannot encode response: %v", err).body())
		status = http.StatusInternalServerError
	}
	if r != nil && r.URL.Query().Has("pretty") && r.URL.Query().Get("pretty") != "false" {
		var ib bytes.Buffer
		if json.Indent(&ib, b, "", "  ") == nil {
			b = ib.Bytes()
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// kv is one key of an ordered JSON object.
type kv struct {
	k string
	v any
}

// obj is a JSON object that keeps its key order, like OpenSearch's XContentBuilder output.
type obj []kv

// MarshalJSON encodes the keys in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, e.k)
		b.WriteByte(':')
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalJSON renders the error as a bare ErrorCause (used inside bulk items and failures).
func (e *osError) MarshalJSON() ([]byte, error) { return json.Marshal(e.render(true)) }

// score is a Lucene float score, printed as Java prints a float (shortest form, "1.0" for 1).
type score float32

// MarshalJSON writes the float32 in its shortest round-tripping form.
func (s score) MarshalJSON() ([]byte, error) {
	f := float32(s)
	b := strconv.AppendFloat(nil, float64(f), 'g', -1, 32)
	if !bytes.ContainsAny(b, ".eEn") { // integral: Java writes "1.0"
		b = append(b, '.', '0')
	}
	return b, nil
}

// didYouMean formats OpenSearch's suggestion suffix (" did you mean [x]?") for an unknown name,
// using Lucene's Levenshtein similarity above threshold.
func didYouMean(name string, candidates []string, threshold float64) string {
	type cand struct {
		d float64
		s string
	}
	var cs []cand
	for _, c := range candidates {
		if d := levenshteinSimilarity(name, c); d > threshold {
			cs = append(cs, cand{d, c})
		}
	}
	if len(cs) == 0 {
		return ""
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d > cs[j].d
		}
		return cs[i].s < cs[j].s
	})
	if len(cs) == 1 {
		return " did you mean [" + cs[0].s + "]?"
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.s
	}
	return " did you mean any of " + javaList(names) + "?"
}

func javaList(xs []string) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x)
	}
	b.WriteByte(']')
	return b.String()
}

// levenshteinSimilarity is Lucene's LevenshteinDistance.getDistance: 1 - edits/max(len).
func levenshteinSimilarity(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	if len(ra) == 0 || len(rb) == 0 {
		if len(ra) == len(rb) {
			return 1
		}
		return 0
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(cur[j-1]+1, prev[j]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return 1 - float64(prev[len(rb)])/float64(max(len(ra), len(rb)))
}
