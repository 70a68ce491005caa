package opensearchlocal

var knnFields = []string{"boost", "_name", "vector", "k", "ignore_unmapped", "max_distance", "min_score", "method_parameters", "filter", "rescore", "expand_nested_docs"}

const knnMaxK = 10000

// parseKNN follows the k-NN plugin's KNNQueryBuilderParser and KNNQueryBuilder.Builder.validate.
func parseKNN(v *jv) (query, *osError) {
	q := &qKNN{boost: 1}
	var vector *jv
	seen := false
	for _, m := range v.obj {
		if seen {
			return nil, errParsingAtKey(v, m, "[knn] query doesn't support multiple fields, found [%s] and [%s]", q.field, m.key)
		}
		seen = true
		q.field = m.key
		if m.val.k != kObject {
			vector = m.val
			continue
		}
		for _, p := range m.val.obj {
			fail := func(cause *osError) *osError {
				return errXContent(p.keyPos(m.val), "[knn] failed to parse field [%s]", p.key).withCause(cause)
			}
			switch p.key {
			case "boost":
				f, ok := p.val.float()
				if !ok {
					return nil, fail(errIllegalArgument("[boost] must be a number"))
				}
				q.boost = float32(f)
			case "_name":
				q.name = p.val.text()
			case "vector":
				vector = p.val
				if p.val.k != kArray {
					return nil, fail(errIllegalArgument("[knn] field 'vector' requires to be an array of numbers"))
				}
			case "k":
				n, ok := p.val.int()
				if !ok {
					return nil, fail(&osError{typ: "number_format_exception", reason: "For input string: \"" + p.val.text() + "\"", plain: true})
				}
				q.k = int(n)
				if q.k == 0 {
					q.k = -1 // set, but invalid: validate reports the range
				}
			case "min_score", "max_distance":
				f, ok := p.val.float()
				if !ok {
					return nil, fail(&osError{typ: "number_format_exception", reason: "For input string: \"" + p.val.text() + "\"", plain: true})
				}
				f32 := float32(f)
				if p.key == "min_score" {
					q.minScore = &f32
				} else {
					q.maxDistance = &f32
				}
			case "ignore_unmapped":
				b, ok := p.val.boolean()
				if !ok {
					return nil, fail(errBoolValue(p.val))
				}
				q.ignoreUnmapped = b
			case "filter":
				f, e := parseQuery(p.val)
				if e != nil {
					return nil, fail(e)
				}
				q.filter = f
			case "method_parameters":
				if p.val.k != kObject {
					return nil, fail(errIllegalArgument("[knn] method_parameters must be an object"))
				}
				for _, mp := range p.val.obj {
					switch mp.key {
					case "ef_search", "nprobes":
						if n, ok := mp.val.int(); !ok || n <= 0 {
							return nil, fail(errIllegalArgument("[knn] %s should be a positive integer", mp.key))
						}
					default:
						return nil, fail(errIllegalArgument("[knn] unknown method parameter found [%s]", mp.key))
					}
				}
			case "rescore", "expand_nested_docs":
				return nil, errUnsupported("the knn parameter [%s]", p.key)
			default:
				return nil, errUnknownField(m.val, p, "knn", knnFields)
			}
		}
	}
	if vector == nil || vector.k != kArray || len(vector.arr) == 0 {
		return nil, errIllegalArgument("[knn] field 'vector' requires to be non-null and non-empty")
	}
	for _, e := range vector.arr {
		f, ok := e.float()
		if !ok || e.k != kNumber {
			return nil, errIllegalArgument("[knn] field 'vector' requires to be an array of numbers")
		}
		q.vector = append(q.vector, float32(f))
	}
	if q.field == "" {
		return nil, errIllegalArgument("[knn] requires field name")
	}
	set := 0
	if q.k != 0 {
		set++
	}
	if q.minScore != nil {
		set++
	}
	if q.maxDistance != nil {
		set++
	}
	if q.k != 0 && (q.k < 0 || q.k > knnMaxK) {
		return nil, errIllegalArgument("[knn] requires k to be in the range (0, %d]", knnMaxK)
	}
	if set != 1 {
		return nil, errIllegalArgument("[knn] requires exactly one of k, distance or score to be set")
	}
	if q.minScore != nil && *q.minScore <= 0 {
		return nil, errIllegalArgument("[knn] requires minScore to be greater than 0")
	}
	return q, nil
}

const hybridMaxSubQueries = 5

// parseHybrid is the neural-search plugin's hybrid query.
func parseHybrid(v *jv) (query, *osError) {
	q := &qHybrid{boost: 1}
	for _, m := range v.obj {
		switch m.key {
		case "queries":
			if m.val.k != kArray {
				return nil, errParsing(m.val, "[hybrid] query does not support [%s]", m.key)
			}
			for _, c := range m.val.arr {
				sub, e := parseQuery(c)
				if e != nil {
					return nil, e
				}
				if _, ok := sub.(*qHybrid); ok {
					return nil, errIllegalArgument("hybrid query must be a top level query and cannot be wrapped into other queries")
				}
				q.queries = append(q.queries, sub)
			}
		case "pagination_depth":
			n, ok := m.val.int()
			if !ok {
				return nil, errParsing(m.val, "[hybrid] failed to parse field [pagination_depth]")
			}
			if n < 1 || n > 10000 {
				return nil, errIllegalArgument("pagination_depth should be less than or equal to 10000 and greater than 0")
			}
			q.paginationDepth = int(n)
		// No filter: the hybrid query's own filter came with neural-search 3.0, and 2.19 refuses
		// it as any unknown field (the default below).
		default:
			if ok, e := common(m, &q.boost, &q.name); ok {
				if e != nil {
					return nil, e
				}
				continue
			}
			return nil, errParsingAtKey(v, m, "[hybrid] query does not support [%s]", m.key)
		}
	}
	if len(q.queries) == 0 {
		return nil, errParsing(v, "[hybrid] requires 'queries' field with at least one clause")
	}
	if len(q.queries) > hybridMaxSubQueries {
		return nil, errParsing(v, "Number of sub-queries exceeds maximum supported by [hybrid] query")
	}
	return q, nil
}
