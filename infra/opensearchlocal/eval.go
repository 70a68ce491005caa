package opensearchlocal

import (
	"math"
	"strconv"
	"strings"
)

// matcher is a query bound to one index snapshot: it tells whether a document matches and its
// score (boost applied). Named queries that matched are appended to names.
type matcher interface {
	match(d *doc, names *[]string) (float32, bool)
}

// shardCtx binds queries to one index's searchable snapshot.
type shardCtx struct {
	ix   *index
	snap *snapshot
	m    *mapping
}

// errQueryShard is QueryShardContext's wrapping of errors raised while building a query.
func errQueryShard(ix *index, cause *osError) *osError {
	e := &osError{typ: "query_shard_exception", reason: "failed to create query: " + cause.reason}
	e.meta = obj{{"index", ix.name}, {"index_uuid", ix.uuid}}
	return e.withCause(cause)
}

func (c *shardCtx) bind(q query) (matcher, *osError) {
	switch q := q.(type) {
	case *qMatchAll:
		return &mConst{boost: q.boost, name: q.name, pred: func(*doc) bool { return true }}, nil
	case *qTerm:
		return c.bindTerm(q.field, q.value, q.boost, q.name, q.caseInsensitive)
	case *qTerms:
		return c.bindTerms(q)
	case *qMatch:
		return c.bindMatch(q)
	case *qBool:
		return c.bindBool(q)
	case *qKNN:
		return c.bindKNN(q)
	case *qHybrid:
		return nil, errIllegalArgument("hybrid query must be a top level query and cannot be wrapped into other queries")
	}
	return nil, errIllegalArgument("opensearchlocal: unhandled query %T", q)
}

// mConst is a constant-score query (match_all, terms, numeric term, case-insensitive term).
type mConst struct {
	boost float32
	name  string
	pred  func(*doc) bool
}

func (m *mConst) match(d *doc, names *[]string) (float32, bool) {
	if !m.pred(d) {
		return 0, false
	}
	addName(names, m.name)
	return m.boost, true
}

func addName(names *[]string, n string) {
	if n != "" && names != nil {
		*names = append(*names, n)
	}
}

// mNone matches nothing (unmapped fields, empty analyzed text).
type mNone struct{}

func (mNone) match(*doc, *[]string) (float32, bool) { return 0, false }

// mBM25 is a TermQuery on an indexed text or keyword field, scored with BM25.
type mBM25 struct {
	field string
	term  string
	text  bool // analyzed text (frequencies and length norms) vs exact terms
	norms bool
	idf   float32
	avgdl float32
	boost float32
	name  string
	isID  bool
}

func (m *mBM25) match(d *doc, names *[]string) (float32, bool) {
	var freq, length int
	if m.isID {
		if d.id != m.term {
			return 0, false
		}
		freq, length = 1, 1
	} else {
		fd := d.fields[m.field]
		if fd == nil {
			return 0, false
		}
		if m.text {
			freq, length = fd.tf[m.term], fd.length
		} else {
			for _, t := range fd.terms {
				if t == m.term {
					freq = 1 // keyword fields index documents only, without frequencies
					break
				}
			}
			length = 1
		}
		if freq == 0 {
			return 0, false
		}
		if !m.norms {
			length = 1
		}
	}
	addName(names, m.name)
	return bm25Score(m.boost, m.idf, float32(freq), length, m.avgdl), true
}

func (c *shardCtx) newBM25(f *field, path, term string, boost float32, name string) matcher {
	st := c.snap.stats[path]
	m := &mBM25{field: path, term: term, text: f.typ == "text", norms: f.typ == "text" && f.norms, boost: boost, name: name}
	if st == nil || st.df[term] == 0 {
		return mNone{}
	}
	m.idf = bm25IDF(st.df[term], st.docCount)
	m.avgdl = bm25AvgDL(st.sumTTF, st.docCount)
	return m
}

func (c *shardCtx) idMatcher(ids []string, boost float32, name string, constant bool) matcher {
	set := map[string]bool{}
	for _, id := range ids {
		set[id] = true
	}
	if constant || len(ids) != 1 {
		return &mConst{boost: boost, name: name, pred: func(d *doc) bool { return set[d.id] }}
	}
	n := int64(len(c.snap.docs))
	return &mBM25{isID: true, term: ids[0], idf: bm25IDF(1, n), avgdl: 1, boost: boost, name: name}
}

func (c *shardCtx) bindTerm(path string, value *jv, boost float32, name string, caseInsensitive bool) (matcher, *osError) {
	if path == "_id" {
		return c.idMatcher([]string{value.text()}, boost, name, caseInsensitive), nil
	}
	f := c.m.find(path)
	if f == nil || f.typ == "object" {
		return mNone{}, nil
	}
	if !f.index {
		return nil, errQueryShard(c.ix, errIllegalArgument("Cannot search on field [%s] since it is not indexed.", path))
	}
	switch f.typ {
	case "text", "keyword":
		term := value.text()
		if caseInsensitive {
			lower := strings.ToLower(term)
			return &mConst{boost: boost, name: name, pred: func(d *doc) bool {
				fd := d.fields[path]
				if fd == nil {
					return false
				}
				if fd.tf != nil {
					for t := range fd.tf {
						if strings.ToLower(t) == lower {
							return true
						}
					}
				}
				for _, t := range fd.terms {
					if strings.ToLower(t) == lower {
						return true
					}
				}
				return false
			}}, nil
		}
		return c.newBM25(f, path, term, boost, name), nil
	case "boolean":
		var b bool
		switch value.text() {
		case "true":
			b = true
		case "false", "":
		default:
			return nil, errQueryShard(c.ix, errIllegalArgument("Can't parse boolean value [%s], expected [true] or [false]", value.text()))
		}
		return c.newBM25(f, path, boolTerm(b), boost, name), nil
	case "knn_vector":
		return nil, errQueryShard(c.ix, errIllegalArgument("Field [%s] of type [knn_vector] does not support term queries", path))
	}
	want, e := c.numericTerm(f, value)
	if e != nil {
		return nil, e
	}
	return &mConst{boost: boost, name: name, pred: func(d *doc) bool {
		if fd := d.fields[path]; fd != nil {
			for _, n := range fd.nums {
				if n == want {
					return true
				}
			}
		}
		return false
	}}, nil
}

// numericTerm parses a query value for a numeric or date field.
func (c *shardCtx) numericTerm(f *field, value *jv) (float64, *osError) {
	if f.typ == "date" {
		ms, ok := dateValue(value, f.format)
		if !ok {
			return 0, errQueryShard(c.ix, errIllegalArgument("failed to parse date field [%s] with format [%s]", value.text(), f.format))
		}
		return float64(ms), nil
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(value.text()), 64)
	if err != nil || value.k == kBool {
		return 0, errQueryShard(c.ix, &osError{typ: "number_format_exception", reason: "For input string: \"" + value.text() + "\"", plain: true})
	}
	if _, isInt := intRanges[f.typ]; isInt {
		x = math.Trunc(x)
	} else if f.typ == "float" || f.typ == "half_float" {
		x = float64(float32(x))
	}
	return x, nil
}

func (c *shardCtx) bindTerms(q *qTerms) (matcher, *osError) {
	if q.field == "_id" {
		ids := make([]string, len(q.values))
		for i, v := range q.values {
			ids[i] = v.text()
		}
		return c.idMatcher(ids, q.boost, q.name, true), nil
	}
	var subs []matcher
	for _, v := range q.values {
		m, e := c.bindTerm(q.field, v, 1, "", false)
		if e != nil {
			return nil, e
		}
		subs = append(subs, m)
	}
	// TermInSetQuery is constant-score.
	return &mConst{boost: q.boost, name: q.name, pred: func(d *doc) bool {
		for _, s := range subs {
			if _, ok := s.match(d, nil); ok {
				return true
			}
		}
		return false
	}}, nil
}

func (c *shardCtx) bindMatch(q *qMatch) (matcher, *osError) {
	f := c.m.find(q.field)
	if f == nil || f.typ == "object" {
		return mNone{}, nil
	}
	if f.typ != "text" {
		if f.typ == "knn_vector" {
			return nil, errQueryShard(c.ix, errIllegalArgument("Field [%s] of type [knn_vector] does not support match queries", q.field))
		}
		return c.bindTerm(q.field, q.text, q.boost, q.name, false)
	}
	if !f.index {
		return nil, errQueryShard(c.ix, errIllegalArgument("Cannot search on field [%s] since it is not indexed.", q.field))
	}
	an := q.analyzer
	if an == "" {
		an = f.searchAnalyzerName()
	}
	toks := analyzeWith(an, q.text.text())
	if len(toks) == 0 {
		if q.zeroTerms == "all" {
			return &mConst{boost: q.boost, name: q.name, pred: func(*doc) bool { return true }}, nil
		}
		return mNone{}, nil
	}
	clauses := make([]matcher, len(toks))
	for i, t := range toks {
		clauses[i] = c.newBM25(f, q.field, t, 1, "")
	}
	if len(clauses) == 1 {
		m := c.newBM25(f, q.field, toks[0], q.boost, q.name)
		return m, nil
	}
	b := &mBool{boost: q.boost, name: q.name}
	if q.operator == "and" {
		b.must = clauses
	} else {
		b.should = clauses
		msm, e := minShouldMatch(q.msm, len(clauses))
		if e != nil {
			return nil, errQueryShard(c.ix, e)
		}
		b.msm = max(msm, 1)
	}
	return b, nil
}

// mBool is a BooleanQuery: scores of matching must and should clauses add up.
type mBool struct {
	must, should, mustNot, filter []matcher
	msm                           int
	boost                         float32
	name                          string
	matchAll                      bool // no clauses at all: a MatchAllDocsQuery
}

func (m *mBool) match(d *doc, names *[]string) (float32, bool) {
	if m.matchAll {
		addName(names, m.name)
		return m.boost, true
	}
	// Clauses add their names as they match; a document the bool query rejects takes them
	// back (no slice per document: this runs for every document of a search).
	mark := 0
	if names != nil {
		mark = len(*names)
	}
	fail := func() (float32, bool) {
		if names != nil {
			*names = (*names)[:mark]
		}
		return 0, false
	}
	var sum float64
	for _, c := range m.filter {
		if _, ok := c.match(d, names); !ok {
			return fail()
		}
	}
	for _, c := range m.must {
		s, ok := c.match(d, names)
		if !ok {
			return fail()
		}
		sum += float64(s)
	}
	for _, c := range m.mustNot {
		if _, ok := c.match(d, nil); ok {
			return fail()
		}
	}
	n := 0
	for _, c := range m.should {
		if s, ok := c.match(d, names); ok {
			n++
			sum += float64(s)
		}
	}
	if n < m.msm {
		return fail()
	}
	addName(names, m.name)
	return float32(sum) * m.boost, true
}

func (c *shardCtx) bindBool(q *qBool) (matcher, *osError) {
	b := &mBool{boost: q.boost, name: q.name}
	bindAll := func(qs []query) ([]matcher, *osError) {
		var out []matcher
		for _, sq := range qs {
			m, e := c.bind(sq)
			if e != nil {
				return nil, e
			}
			out = append(out, m)
		}
		return out, nil
	}
	var e *osError
	if b.must, e = bindAll(q.must); e != nil {
		return nil, e
	}
	if b.should, e = bindAll(q.should); e != nil {
		return nil, e
	}
	if b.mustNot, e = bindAll(q.mustNot); e != nil {
		return nil, e
	}
	if b.filter, e = bindAll(q.filter); e != nil {
		return nil, e
	}
	if len(q.must)+len(q.should)+len(q.mustNot)+len(q.filter) == 0 {
		b.matchAll = true
		return b, nil
	}
	if q.msm != "" {
		msm, e := minShouldMatch(q.msm, len(b.should))
		if e != nil {
			return nil, errQueryShard(c.ix, e)
		}
		b.msm = msm
	} else if len(b.must)+len(b.filter) == 0 && len(b.should) > 0 {
		b.msm = 1
	}
	return b, nil
}

// minShouldMatch is Queries.calculateMinShouldMatch for the forms "3", "-1", "75%", "-25%".
func minShouldMatch(spec string, optional int) (int, *osError) {
	s := strings.TrimSpace(spec)
	if s == "" {
		return 0, nil
	}
	if strings.Contains(s, "<") || strings.Contains(s, " ") {
		return 0, errUnsupported("combination minimum_should_match [%s]", spec)
	}
	var result int
	if strings.HasSuffix(s, "%") {
		p, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
		if err != nil {
			return 0, errIllegalArgument("Invalid minimum_should_match [%s]", spec)
		}
		calc := int(float64(p) * float64(optional) / 100)
		if p < 0 {
			result = optional + calc
		} else {
			result = calc
		}
	} else {
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, &osError{typ: "number_format_exception", reason: "For input string: \"" + s + "\"", plain: true}
		}
		if n < 0 {
			result = optional + n
		} else {
			result = n
		}
	}
	if result < 0 {
		result = 0
	}
	// More than there are optional clauses is capped (Queries.calculateMinShouldMatch).
	return min(result, optional), nil
}

func (m *mScores) match(d *doc, names *[]string) (float32, bool) {
	s, ok := m.scores[d]
	if ok {
		addName(names, m.name)
	}
	return s, ok
}
