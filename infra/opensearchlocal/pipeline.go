package opensearchlocal

import (
	"math"
	"math/big"
	"net/http"
	"strings"
	"time"
)

// pipeline is a search pipeline; the stand-in implements the neural-search plugin's two
// phase-results processors that hybrid search needs.
type pipeline struct {
	id    string
	body  *jv
	phase *phaseProcessor
}

// phaseProcessor is a normalization-processor or a score-ranker-processor.
type phaseProcessor struct {
	normalization string    // min_max, l2, rrf
	combination   string    // arithmetic_mean, geometric_mean, harmonic_mean, rrf (a sum)
	weights       []float32 // nil: equal weights
	rankConstant  int
}

// handlePipeline serves PUT, GET and DELETE /_search/pipeline/{id}.
func (s *Server) handlePipeline(q *request, args []string) {
	id := args[0]
	switch q.r.Method {
	case http.MethodGet:
		s.mu.RLock()
		p := s.pipelines[id]
		s.mu.RUnlock()
		if p == nil {
			writeJSON(q.w, q.r, http.StatusNotFound, obj{})
			return
		}
		writeJSON(q.w, q.r, http.StatusOK, obj{{id, p.body}})
	case http.MethodDelete:
		s.mu.Lock()
		_, ok := s.pipelines[id]
		delete(s.pipelines, id)
		s.mu.Unlock()
		if !ok {
			writeError(q.w, q.r, &osError{typ: "resource_not_found_exception", reason: "pipeline [" + id + "] is missing", status: http.StatusNotFound})
			return
		}
		writeJSON(q.w, q.r, http.StatusOK, obj{{"acknowledged", true}})
	case http.MethodPut:
		if len(strings.TrimSpace(string(q.body))) == 0 {
			writeError(q.w, q.r, errParse("request body is required"))
			return
		}
		v, err := parseJSON(q.body)
		if err != nil {
			writeError(q.w, q.r, errJSON(q.body, err))
			return
		}
		p, e := parsePipeline(id, v)
		if e != nil {
			writeError(q.w, q.r, e)
			return
		}
		s.mu.Lock()
		s.pipelines[id] = p
		s.mu.Unlock()
		writeJSON(q.w, q.r, http.StatusOK, obj{{"acknowledged", true}})
	}
}

func parsePipeline(id string, v *jv) (*pipeline, *osError) {
	if v.k != kObject {
		return nil, errParse("Failed to derive xcontent")
	}
	p := &pipeline{id: id, body: v}
	var unknown []string
	for _, m := range v.obj {
		switch m.key {
		case "description", "version":
		case "request_processors", "response_processors":
			if m.val.k != kArray || len(m.val.arr) > 0 {
				return nil, errUnsupported("search pipeline %s", m.key)
			}
		case "phase_results_processors":
			if m.val.k != kArray {
				return nil, errParse("[phase_results_processors] property isn't a list, but of type [%s]", javaClass(m.val))
			}
			for _, pv := range m.val.arr {
				if pv.k != kObject || len(pv.obj) != 1 {
					return nil, errParse("[phase_results_processors] processor must be a map with exactly one processor type")
				}
				if p.phase != nil {
					return nil, errUnsupported("more than one phase-results processor in a search pipeline")
				}
				pp, e := parsePhaseProcessor(pv.obj[0].key, pv.obj[0].val)
				if e != nil {
					return nil, e
				}
				p.phase = pp
			}
		default:
			unknown = append(unknown, m.key)
		}
	}
	if len(unknown) > 0 {
		return nil, errParse("pipeline [%s] doesn't support one or more provided configuration parameters %s", id, javaList(unknown))
	}
	return p, nil
}

var processorCommon = []string{"tag", "description", "ignore_failure"}

func parsePhaseProcessor(typ string, v *jv) (*phaseProcessor, *osError) {
	if v.k != kObject {
		return nil, errParse("[%s] processor config must be a map", typ)
	}
	pp := &phaseProcessor{}
	switch typ {
	case "normalization-processor":
		pp.normalization, pp.combination = "min_max", "arithmetic_mean"
		for _, m := range v.obj {
			switch m.key {
			case "normalization":
				t, params, e := techniqueOf(m.val)
				if e != nil {
					return nil, e
				}
				switch t {
				case "", "min_max", "l2":
					if t != "" {
						pp.normalization = t
					}
				case "z_score":
					return nil, errUnsupported("normalization technique [z_score]")
				default:
					return nil, errIllegalArgument("provided normalization technique [%s] is not supported", t)
				}
				if params != nil && len(params.obj) > 0 {
					return nil, errUnsupported("normalization parameters (lower_bounds)")
				}
			case "combination":
				t, params, e := techniqueOf(m.val)
				if e != nil {
					return nil, e
				}
				switch t {
				case "", "arithmetic_mean", "geometric_mean", "harmonic_mean":
					if t != "" {
						pp.combination = t
					}
				default:
					return nil, errIllegalArgument("provided combination technique [%s] is not supported", t)
				}
				if params != nil {
					for _, pm := range params.obj {
						if pm.key != "weights" {
							return nil, errIllegalArgument("provided parameter for combination technique is not supported. supported parameters are [weights]")
						}
						if pm.val.k != kArray {
							return nil, errIllegalArgument("parameter [weights] must be a collection of numbers")
						}
						for _, w := range pm.val.arr {
							f, ok := w.float()
							if !ok || w.k != kNumber {
								return nil, errIllegalArgument("parameter [weights] must be a collection of numbers")
							}
							pp.weights = append(pp.weights, float32(f))
						}
					}
					if e := validateWeights(pp.weights); e != nil {
						return nil, e
					}
				}
			default:
				if !contains(processorCommon, m.key) {
					return nil, errParse("processor [%s] doesn't support one or more provided configuration parameters [%s]", typ, m.key)
				}
			}
		}
	case "score-ranker-processor":
		pp.normalization, pp.combination, pp.rankConstant = "rrf", "rrf", 60
		for _, m := range v.obj {
			switch m.key {
			case "combination":
				if m.val.k != kObject {
					return nil, errParse("[combination] must be a map")
				}
				for _, cm := range m.val.obj {
					switch cm.key {
					case "technique":
						if cm.val.text() != "rrf" {
							return nil, errIllegalArgument("provided combination technique [%s] is not supported", cm.val.text())
						}
					case "rank_constant":
						n, ok := cm.val.int()
						if !ok {
							return nil, errIllegalArgument("parameter [rank_constant] must be an integer")
						}
						if n < 1 || n > 10000 {
							return nil, errIllegalArgument("rank constant must be in the interval between 1 and 10000, submitted rank constant: %d", n)
						}
						pp.rankConstant = int(n)
					case "parameters":
						return nil, errUnsupported("score-ranker-processor parameters (weights)")
					default:
						return nil, errIllegalArgument("unrecognized parameters in normalization technique")
					}
				}
			default:
				if !contains(processorCommon, m.key) {
					return nil, errParse("processor [%s] doesn't support one or more provided configuration parameters [%s]", typ, m.key)
				}
			}
		}
	default:
		return nil, errUnsupported("the search pipeline processor [%s]", typ)
	}
	return pp, nil
}

func techniqueOf(v *jv) (string, *jv, *osError) {
	if v.k != kObject {
		return "", nil, errParse("technique config must be a map")
	}
	var t string
	var params *jv
	for _, m := range v.obj {
		switch m.key {
		case "technique":
			t = m.val.text()
		case "parameters":
			params = m.val
		default:
			return "", nil, errIllegalArgument("unrecognized parameters in normalization technique")
		}
	}
	return t, params, nil
}

// validateWeights is ScoreCombinationUtil's check: each weight in [0, 1], summing to 1.0.
func validateWeights(ws []float32) *osError {
	var sum float32
	for _, w := range ws {
		if w < 0 || w > 1 {
			return errIllegalArgument("all weights must be in range [0.0 ... 1.0], submitted weights: %s", floatList(ws))
		}
		sum += w
	}
	if math.Abs(float64(sum)-1) > 0.01 {
		return errIllegalArgument("sum of weights for combination must be equal to 1.0, submitted weights: %s", floatList(ws))
	}
	return nil
}

func floatList(ws []float32) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		b, _ := score(w).MarshalJSON()
		parts[i] = string(b)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// runHybrid executes a hybrid query with a phase-results processor, as neural-search does: each
// sub-query collects its top results (pagination_depth, or from+size), scores are normalised per
// sub-query across indices and combined per document, and the combined list is cut to the
// longest sub-query list.
func runHybrid(ixs []*index, h *qHybrid, req *searchReq, pp *phaseProcessor, now time.Time) ([]scoredHit, int, []shardFailure, *osError) {
	depth := req.from + req.size
	if h.paginationDepth > 0 {
		depth = h.paginationDepth
	} else if req.from > 0 {
		return nil, 0, nil, errIllegalArgument("pagination_depth is missing in the search request")
	}
	type key struct {
		ix *index
		d  *doc
	}
	n := len(h.queries)
	lists := make([][]scoredHit, n)
	var failures []shardFailure
	for pos, ix := range ixs {
		var perIx [][]scoredHit
		var failed *osError
		for _, q := range h.queries {
			res, e := searchIndex(ix, pos, q, nil, depth, now)
			if e != nil {
				failed = e
				break
			}
			perIx = append(perIx, res.hits)
		}
		if failed != nil {
			failures = append(failures, shardFailure{index: ix.name, indexUUID: ix.uuid, cause: failed})
			continue
		}
		for i := range perIx {
			lists[i] = append(lists[i], perIx[i]...)
		}
	}
	if len(failures) > 0 && len(failures) == len(ixs) {
		return nil, 0, failures, nil
	}
	if pp.weights != nil && len(pp.weights) != n {
		return nil, 0, nil, errIllegalArgument("number of weights [%d] must match number of sub-queries [%d] in hybrid query", len(pp.weights), n)
	}
	normalized := make([]map[key]float32, n)
	maxHits := 0
	for i, list := range lists {
		maxHits = max(maxHits, len(list))
		normalized[i] = map[key]float32{}
		switch pp.normalization {
		case "rrf":
			sortHits(list)
			for rank, hit := range list {
				normalized[i][key{hit.ix, hit.d}] = rrfScore(pp.rankConstant, rank)
			}
		case "l2":
			var sumSq float32
			for _, hit := range list {
				sumSq += hit.score * hit.score
			}
			norm := float32(math.Sqrt(float64(sumSq)))
			for _, hit := range list {
				s := float32(0)
				if norm != 0 {
					s = hit.score / norm
				}
				normalized[i][key{hit.ix, hit.d}] = s
			}
		default: // min_max
			lo, hi := float32(math.MaxFloat32), float32(math.SmallestNonzeroFloat32)
			for _, hit := range list {
				lo, hi = min(lo, hit.score), max(hi, hit.score)
			}
			for _, hit := range list {
				var s float32
				// Every score of the list lies in [lo, hi], so hi == lo means they are all
				// equal (one hit, or ties only): neural-search's single-result score, 1.
				if hi == lo {
					s = 1
				} else {
					s = (hit.score - lo) / (hi - lo)
					if s == 0 {
						s = 0.001
					}
				}
				normalized[i][key{hit.ix, hit.d}] = s
			}
		}
	}
	combined := map[key]float32{}
	byKey := map[key]scoredHit{}
	for _, list := range lists {
		for _, hit := range list {
			k := key{hit.ix, hit.d}
			if _, ok := byKey[k]; ok {
				continue
			}
			byKey[k] = hit
			scores := make([]float32, n)
			for j := range scores {
				s, ok := normalized[j][k]
				if !ok {
					s = -1
				}
				scores[j] = s
			}
			combined[k] = pp.combine(scores)
		}
	}
	out := make([]scoredHit, 0, len(combined))
	for k, s := range combined {
		hit := byKey[k]
		hit.score = s
		hit.names = nil
		out = append(out, hit)
	}
	sortHits(out)
	if len(out) > maxHits {
		out = out[:maxHits]
	}
	return out, maxHits, failures, nil
}

// rrfScore is 1/(rank_constant + rank), rounded to 10 decimals half-up as neural-search does.
func rrfScore(k, rank int) float32 {
	den := int64(k + rank + 1)
	const scale = 10_000_000_000
	q := (2*scale + den) / (2 * den) // 10^10/den rounded half-up
	f, _ := new(big.Rat).SetFrac64(q, scale).Float32()
	return f
}

// combine merges one document's normalised sub-query scores (-1: not found by that sub-query).
func (pp *phaseProcessor) combine(scores []float32) float32 {
	weight := func(i int) float32 {
		if pp.weights == nil {
			return 1
		}
		return pp.weights[i]
	}
	switch pp.combination {
	case "rrf":
		var sum float32
		for _, s := range scores {
			if s >= 0 {
				sum += s
			}
		}
		return sum
	case "geometric_mean":
		var lnSum, wSum float32
		for i, s := range scores {
			if s > 0 {
				lnSum += weight(i) * float32(math.Log(float64(s)))
				wSum += weight(i)
			}
		}
		if wSum == 0 {
			return 0
		}
		return float32(math.Exp(float64(lnSum / wSum)))
	case "harmonic_mean":
		var inv, wSum float32
		for i, s := range scores {
			if s > 0 {
				inv += weight(i) / s
				wSum += weight(i)
			}
		}
		if wSum == 0 || inv == 0 {
			return 0
		}
		return wSum / inv
	default: // arithmetic_mean
		var sum, wSum float32
		for i, s := range scores {
			if s >= 0 {
				sum += s * weight(i)
				wSum += weight(i)
			}
		}
		if wSum == 0 {
			return 0
		}
		return sum / wSum
	}
}
