package opensearchlocal

import (
	"strings"
)

// Query DSL nodes of the slice.
type (
	qMatchAll struct {
		boost float32
		name  string
	}
	qTerm struct {
		field           string
		value           *jv
		boost           float32
		name            string
		caseInsensitive bool
	}
	qTerms struct {
		field  string
		values []*jv
		boost  float32
		name   string
	}
	qMatch struct {
		field     string
		text      *jv
		operator  string // or, and
		msm       string
		zeroTerms string // none, all
		analyzer  string // "" means the field's search analyzer
		boost     float32
		name      string
	}
	qBool struct {
		must, should, mustNot, filter []query
		msm                           string
		boost                         float32
		name                          string
	}
	qKNN struct {
		field          string
		vector         []float32
		k              int
		minScore       *float32
		maxDistance    *float32
		filter         query
		ignoreUnmapped bool
		boost          float32
		name           string
	}
	qHybrid struct {
		queries         []query
		paginationDepth int
		boost           float32
		name            string
	}
)

// query is any parsed query node.
type query interface{ queryName() string }

func (q *qMatchAll) queryName() string { return q.name }

func (q *qTerm) queryName() string { return q.name }

func (q *qTerms) queryName() string { return q.name }

func (q *qMatch) queryName() string { return q.name }

func (q *qBool) queryName() string { return q.name }

func (q *qKNN) queryName() string { return q.name }

func (q *qHybrid) queryName() string { return q.name }

// otherQueries are query types OpenSearch 2.19 (with the k-NN and neural plugins) registers that
// the stand-in does not implement.
var otherQueries = []string{"match_none", "match_phrase", "match_phrase_prefix", "match_bool_prefix", "multi_match", "query_string",
	"simple_query_string", "range", "exists", "prefix", "wildcard", "regexp", "fuzzy", "ids", "constant_score", "dis_max",
	"function_score", "nested", "has_child", "has_parent", "parent_id", "geo_bounding_box", "geo_distance", "geo_polygon",
	"geo_shape", "script", "script_score", "boosting", "more_like_this", "wrapper", "span_term", "span_or", "span_near",
	"span_not", "span_first", "span_within", "span_containing", "span_multi", "field_masking_span", "distance_feature",
	"rank_feature", "neural", "neural_sparse", "intervals", "terms_set", "template", "xy_shape", "percolate", "agentic"}

var sliceQueries = []string{"match_all", "term", "terms", "match", "bool", "knn", "hybrid"}

// parseQuery is AbstractQueryBuilder.parseInnerQueryBuilder: {"<type>": {…}} with exactly one key.
func parseQuery(v *jv) (query, *osError) {
	if v.k != kObject {
		return nil, errParsing(v, "[_na] query malformed, must start with start_object")
	}
	if len(v.obj) == 0 {
		l, c := lineCol(v.src, v.off+1)
		return nil, errIllegalArgument("query malformed, empty clause found at [%d:%d]", l, c)
	}
	m := v.obj[0]
	name := m.key
	if m.val.k != kObject {
		return nil, errParsing(m.val, "[%s] query malformed, no start_object after query name", name)
	}
	var q query
	var e *osError
	switch name {
	case "match_all":
		q, e = parseMatchAll(m.val)
	case "term":
		q, e = parseTerm(m.val)
	case "terms":
		q, e = parseTerms(m.val)
	case "match":
		q, e = parseMatch(m.val)
	case "bool":
		q, e = parseBool(m.val)
	case "knn":
		q, e = parseKNN(m.val)
	case "hybrid":
		q, e = parseHybrid(m.val)
	default:
		if contains(otherQueries, name) {
			return nil, errUnsupported("the [%s] query", name)
		}
		l, c := lineCol(v.src, m.keyOff)
		pe := errParsingAtKey(v, m, "unknown query [%s]%s", name, didYouMean(name, append(append([]string{}, sliceQueries...), otherQueries...), 0.5))
		return nil, pe.withCause(&osError{typ: "named_object_not_found_exception", reason: "[" + itoa(l) + ":" + itoa(c) + "] unknown field [" + name + "]", plain: true})
	}
	if e != nil {
		return nil, e
	}
	if len(v.obj) > 1 {
		return nil, errParsingAtKey(v, v.obj[1], "[%s] malformed query, expected [END_OBJECT] but found [FIELD_NAME]", name)
	}
	return q, nil
}

// common reads boost and _name; it reports whether the member was one of them.
func common(m member, boost *float32, name *string) (bool, *osError) {
	switch m.key {
	case "boost":
		f, ok := m.val.float()
		if !ok {
			return true, errParsing(m.val, "[boost] must be a number, found [%s]", m.val.text())
		}
		*boost = float32(f)
		return true, nil
	case "_name":
		*name = m.val.text()
		return true, nil
	}
	return false, nil
}

func parseMatchAll(v *jv) (query, *osError) {
	q := &qMatchAll{boost: 1}
	for _, m := range v.obj {
		if ok, e := common(m, &q.boost, &q.name); ok {
			if e != nil {
				return nil, e
			}
			continue
		}
		return nil, errParsingAtKey(v, m, "[match_all] query does not support [%s]", m.key)
	}
	return q, nil
}

func parseTerm(v *jv) (query, *osError) {
	q := &qTerm{boost: 1}
	for _, m := range v.obj {
		if q.field != "" {
			return nil, errParsingAtKey(v, m, "[term] query doesn't support multiple fields, found [%s] and [%s]", q.field, m.key)
		}
		switch m.val.k {
		case kObject:
			q.field = m.key
			for _, p := range m.val.obj {
				if p.val.k == kObject || p.val.k == kArray {
					return nil, errParsing(p.val, "[term] unknown token [%s] after [%s]", p.val.tokenName(), p.key)
				}
				if ok, e := common(p, &q.boost, &q.name); ok {
					if e != nil {
						return nil, e
					}
					continue
				}
				switch p.key {
				case "value", "term":
					q.value = p.val
				case "case_insensitive":
					b, ok := p.val.boolean()
					if !ok {
						return nil, errBoolValue(p.val)
					}
					q.caseInsensitive = b
				default:
					return nil, errParsingAtKey(m.val, p, "[term] query does not support [%s]", p.key)
				}
			}
		case kArray:
			return nil, errParsing(m.val, "[term] query does not support array of values")
		default:
			q.field, q.value = m.key, m.val
		}
	}
	if q.field == "" {
		return nil, errIllegalArgument("field name is null or empty")
	}
	if q.value == nil || q.value.k == kNull {
		return nil, errIllegalArgument("value cannot be null")
	}
	return q, nil
}

func parseTerms(v *jv) (query, *osError) {
	q := &qTerms{boost: 1}
	for _, m := range v.obj {
		switch m.val.k {
		case kArray:
			if q.field != "" {
				return nil, errParsingAtKey(v, m, "[terms] query does not support multiple fields")
			}
			q.field = m.key
			for _, e := range m.val.arr {
				if e.k == kNull {
					return nil, errIllegalArgument("No value specified for terms query")
				}
				if !e.isScalar() {
					return nil, errIllegalArgument("Unsupported value type in terms query: %s", e.tokenName())
				}
			}
			q.values = m.val.arr
		case kObject:
			if q.field != "" {
				return nil, errParsingAtKey(v, m, "[terms] query does not support multiple fields")
			}
			return nil, errUnsupported("terms lookup")
		default:
			if ok, e := common(m, &q.boost, &q.name); ok {
				if e != nil {
					return nil, e
				}
				continue
			}
			return nil, errParsingAtKey(v, m, "[terms] query does not support [%s]", m.key)
		}
	}
	if q.field == "" {
		return nil, errParsing(v, "[terms] query requires a field name, followed by array of terms or a document lookup specification")
	}
	return q, nil
}

var matchAccepted = []string{"max_expansions", "prefix_length", "fuzzy_transpositions", "auto_generate_synonyms_phrase_query", "lenient"}

func parseMatch(v *jv) (query, *osError) {
	q := &qMatch{boost: 1, operator: "or", zeroTerms: "none"}
	for _, m := range v.obj {
		if q.field != "" {
			return nil, errParsingAtKey(v, m, "[match] query doesn't support multiple fields, found [%s] and [%s]", q.field, m.key)
		}
		q.field = m.key
		if m.val.k != kObject {
			if m.val.k == kArray {
				return nil, errParsing(m.val, "[match] unknown token [START_ARRAY] after [%s]", m.key)
			}
			q.text = m.val
			continue
		}
		for _, p := range m.val.obj {
			if p.val.k == kObject || p.val.k == kArray {
				return nil, errParsing(p.val, "[match] unknown token [%s] after [%s]", p.val.tokenName(), p.key)
			}
			if ok, e := common(p, &q.boost, &q.name); ok {
				if e != nil {
					return nil, e
				}
				continue
			}
			switch p.key {
			case "query":
				q.text = p.val
			case "operator":
				op := strings.ToLower(p.val.text())
				if op != "or" && op != "and" {
					return nil, errIllegalArgument("operator needs to be either [OR, AND], but not [%s]", p.val.text())
				}
				q.operator = op
			case "minimum_should_match":
				q.msm = p.val.text()
			case "zero_terms_query":
				zt := strings.ToLower(p.val.text())
				if zt != "none" && zt != "all" {
					return nil, errParsing(p.val, "Unsupported zero_terms_query value [%s]", p.val.text())
				}
				q.zeroTerms = zt
			case "analyzer":
				if !knownAnalyzer(p.val.text()) {
					return nil, errUnsupported("the analyzer [%s]", p.val.text())
				}
				q.analyzer = p.val.text()
			case "fuzziness", "fuzzy_rewrite", "cutoff_frequency":
				return nil, errUnsupported("the match parameter [%s]", p.key)
			default:
				if contains(matchAccepted, p.key) {
					continue
				}
				return nil, errParsingAtKey(m.val, p, "[match] query does not support [%s]", p.key)
			}
		}
	}
	if q.field == "" {
		return nil, errParsing(v, "No text specified for text query")
	}
	if q.text == nil || q.text.k == kNull {
		return nil, errParsing(v, "No text specified for text query")
	}
	return q, nil
}

func parseBool(v *jv) (query, *osError) {
	q := &qBool{boost: 1}
	for _, m := range v.obj {
		var dst *[]query
		switch m.key {
		case "must":
			dst = &q.must
		case "should":
			dst = &q.should
		case "must_not", "mustNot":
			dst = &q.mustNot
		case "filter":
			dst = &q.filter
		}
		if m.val.k == kObject || m.val.k == kArray {
			if dst == nil {
				return nil, errParsingAtKey(v, m, "[bool] query does not support [%s]", m.key)
			}
			clauses := []*jv{m.val}
			if m.val.k == kArray {
				clauses = m.val.arr
			}
			for _, c := range clauses {
				sub, e := parseQuery(c)
				if e != nil {
					return nil, e
				}
				if _, ok := sub.(*qHybrid); ok {
					return nil, errIllegalArgument("hybrid query must be a top level query and cannot be wrapped into other queries")
				}
				*dst = append(*dst, sub)
			}
			continue
		}
		if ok, e := common(m, &q.boost, &q.name); ok {
			if e != nil {
				return nil, e
			}
			continue
		}
		switch m.key {
		case "minimum_should_match":
			q.msm = m.val.text()
		case "adjust_pure_negative":
			if _, ok := m.val.boolean(); !ok {
				return nil, errBoolValue(m.val)
			}
		default:
			return nil, errParsingAtKey(v, m, "[bool] query does not support [%s]", m.key)
		}
	}
	return q, nil
}
