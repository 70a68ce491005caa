package opensearchlocal

import (
	"math"
)

// k-NN spaces and their score translations, from the k-NN plugin's documentation
// ("k-NN spaces") and its SpaceType / KNNScoringUtil code. The stand-in searches exactly (brute
// force over every visible vector): scores equal what the engines compute for the same
// vectors, but approximate recall (HNSW graphs, per-segment k) can only be checked on AWS.
const (
	spaceL2           = "l2"
	spaceCosine       = "cosinesimil"
	spaceInnerProduct = "innerproduct"
	spaceL1           = "l1"
	spaceLinf         = "linf"

	engineFaiss  = "faiss"
	engineLucene = "lucene"
	engineNmslib = "nmslib"
)

// knnField is a knn_vector mapping's search-relevant configuration.
type knnField struct {
	dimension int
	space     string
	engine    string
}

// engineSpaces lists the spaces each engine accepts (OpenSearch 2.19: faiss gained cosinesimil
// in 2.19; Lucene has no l1 or linf).
var engineSpaces = map[string][]string{
	engineFaiss:  {spaceL2, spaceInnerProduct, spaceCosine},
	engineLucene: {spaceL2, spaceInnerProduct, spaceCosine},
	engineNmslib: {spaceL2, spaceInnerProduct, spaceCosine, spaceL1, spaceLinf},
}

// distance is the engine's raw distance between two vectors (float arithmetic, as the engines use).
func (f knnField) distance(q, v []float32) float32 {
	switch f.space {
	case spaceL2:
		var d float32
		for i := range q {
			x := q[i] - v[i]
			d += x * x
		}
		return d // squared Euclidean, as faiss and Lucene compute it
	case spaceL1:
		var d float32
		for i := range q {
			d += float32(math.Abs(float64(q[i] - v[i])))
		}
		return d
	case spaceLinf:
		var d float32
		for i := range q {
			d = max(d, float32(math.Abs(float64(q[i]-v[i]))))
		}
		return d
	case spaceCosine:
		return 1 - cosine(q, v)
	default: // innerproduct
		if f.engine == engineLucene {
			return dot(q, v)
		}
		return -dot(q, v)
	}
}

// scoreFromDistance is the space's score translation for the field's engine.
func (f knnField) scoreFromDistance(d float32) float32 {
	switch f.space {
	case spaceCosine:
		return max((2-d)/2, 0)
	case spaceInnerProduct:
		if f.engine == engineLucene {
			// Lucene's MAXIMUM_INNER_PRODUCT: d is the dot product.
			if d > 0 {
				return d + 1
			}
			return 1 / (1 - d)
		}
		// faiss and nmslib: d is the negated dot product.
		if d >= 0 {
			return 1 / (1 + d)
		}
		return -d + 1
	default: // l2, l1, linf
		return 1 / (1 + d)
	}
}

// score is the similarity score of v for query q.
func (f knnField) score(q, v []float32) float32 { return f.scoreFromDistance(f.distance(q, v)) }

// distanceToScore converts a radial search's max_distance into the score threshold the plugin
// compares with (KNNQueryBuilder translates max_distance through the same function).
func (f knnField) distanceToScore(maxDistance float32) float32 {
	if f.space == spaceInnerProduct && f.engine == engineLucene {
		// For Lucene the raw value is the dot product, and a larger one is closer; the plugin
		// passes the negated distance.
		return f.scoreFromDistance(-maxDistance)
	}
	return f.scoreFromDistance(maxDistance)
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func cosine(a, b []float32) float32 {
	var ab, aa, bb float32
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / float32(math.Sqrt(float64(aa)*float64(bb)))
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// mScores is a query whose matches and scores were computed up front (k-NN).
type mScores struct {
	scores map[*doc]float32
	name   string
}

// bindKNN runs the exact k-NN search: the filter first (efficient filtering), then the top k
// by score, or every document within min_score / max_distance (radial search).
func (c *shardCtx) bindKNN(q *qKNN) (matcher, *osError) {
	f := c.m.find(q.field)
	if f == nil || f.typ != "knn_vector" {
		if f == nil && q.ignoreUnmapped {
			return mNone{}, nil
		}
		return nil, errQueryShard(c.ix, errIllegalArgument("Field '%s' is not knn_vector type.", q.field))
	}
	if !c.ix.knn {
		return nil, errUnsupported("k-NN search on an index without index.knn: true (OpenSearch only offers exact script scoring there)")
	}
	kf := *f.knn
	if len(q.vector) != kf.dimension {
		return nil, errQueryShard(c.ix, errIllegalArgument("Query vector has invalid dimension: %d. Dimension should be: %d", len(q.vector), kf.dimension))
	}
	if kf.space == spaceCosine && isZero(q.vector) {
		return nil, errQueryShard(c.ix, errIllegalArgument("zero vector is not supported when space type is [%s]", spaceCosine))
	}
	if q.filter != nil && kf.engine == engineNmslib {
		return nil, errQueryShard(c.ix, errIllegalArgument("Engine [NMSLIB] does not support filters"))
	}
	var filter matcher
	if q.filter != nil {
		var e *osError
		if filter, e = c.bind(q.filter); e != nil {
			return nil, e
		}
	}
	keep := -1 // radial search: every document within the threshold
	if q.k > 0 {
		keep = q.k
	}
	top := newTopK(keep)
	threshold := float32(math.Inf(-1))
	if q.minScore != nil {
		threshold = *q.minScore
	}
	if q.maxDistance != nil {
		threshold = kf.distanceToScore(*q.maxDistance)
	}
	for _, d := range c.snap.docs {
		fd := d.fields[q.field]
		if fd == nil || fd.vec == nil {
			continue
		}
		if filter != nil {
			if _, ok := filter.match(d, nil); !ok {
				continue
			}
		}
		s := kf.score(q.vector, fd.vec)
		if s < threshold {
			continue
		}
		top.offer(scoredHit{d: d, score: s})
	}
	hits := top.result()
	out := &mScores{scores: make(map[*doc]float32, len(hits)), name: q.name}
	for _, h := range hits {
		out.scores[h.d] = h.score * q.boost
	}
	return out, nil
}
