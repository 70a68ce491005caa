package opensearchlocal

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

const scrollSize = 1000 // delete-by-query's default batch size

// handleDeleteByQuery serves POST /{index}/_delete_by_query. Like OpenSearch it searches the
// current searchable snapshot (no refresh first), then deletes each hit on the condition that it
// is still the version it saw: a document changed or deleted since the last refresh is a version
// conflict (counted with conflicts=proceed, fatal with the default conflicts=abort).
func (s *Server) handleDeleteByQuery(q *request, args []string) {
	start := time.Now()
	// Delete-by-query's refresh is a plain boolean (no wait_for).
	refresh, e := q.boolParam("refresh", false)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	if wfc, e := q.boolParam("wait_for_completion", true); e != nil || !wfc {
		if e == nil {
			e = errUnsupported("wait_for_completion=false (tasks)")
		}
		writeError(q.w, q.r, e)
		return
	}
	proceed := false
	switch c := q.params.Get("conflicts"); c {
	case "", "abort":
	case "proceed":
		proceed = true
	default:
		writeError(q.w, q.r, errIllegalArgument("conflicts may only be \"proceed\" or \"abort\" but was [%s]", c))
		return
	}
	maxDocs := -1
	if q.params.Has("max_docs") {
		n, err := strconv.Atoi(q.params.Get("max_docs"))
		if err != nil || n <= 0 {
			writeError(q.w, q.r, errValidation("maxDocs should be greater than 0 if the request is limited to some number of documents or -1 if it isn't but it was ["+q.params.Get("max_docs")+"]"))
			return
		}
		maxDocs = n
	}
	var qry query
	if len(strings.TrimSpace(string(q.body))) > 0 {
		v, err := parseJSON(q.body)
		if err != nil {
			writeError(q.w, q.r, errJSON(q.body, err))
			return
		}
		if v.k != kObject {
			writeError(q.w, q.r, errParsing(v, "Expected [START_OBJECT] but found [%s]", v.tokenName()))
			return
		}
		for _, m := range v.obj {
			switch m.key {
			case "query":
				if qry, e = parseQuery(m.val); e != nil {
					writeError(q.w, q.r, e)
					return
				}
			case "max_docs":
				n, ok := m.val.int()
				if !ok || n <= 0 {
					writeError(q.w, q.r, errValidation("maxDocs should be greater than 0 if the request is limited to some number of documents or -1 if it isn't but it was ["+m.val.text()+"]"))
					return
				}
				maxDocs = int(n)
			case "conflicts":
				switch m.val.text() {
				case "proceed":
					proceed = true
				case "abort":
				default:
					writeError(q.w, q.r, errIllegalArgument("conflicts may only be \"proceed\" or \"abort\" but was [%s]", m.val.text()))
					return
				}
			default:
				if contains(searchSourceKeys, m.key) || m.key == "size" || m.key == "from" || m.key == "_source" {
					writeError(q.w, q.r, errUnsupported("the delete-by-query body key [%s]", m.key))
					return
				}
				writeError(q.w, q.r, errParsingAtKey(v, m, "Unknown key for a %s in [%s].", m.val.tokenName(), m.key))
				return
			}
		}
	}
	if qry == nil {
		writeError(q.w, q.r, errValidation("query is missing"))
		return
	}
	if _, ok := qry.(*qHybrid); ok {
		writeError(q.w, q.r, errUnsupported("a hybrid query in delete-by-query"))
		return
	}
	ignore, e := q.boolParam("ignore_unavailable", false)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	ixs, e := s.resolve(args[0], ignore)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	now := time.Now()
	var hits []scoredHit
	var failures []shardFailure
	for pos, ix := range ixs {
		res, e := searchIndex(ix, pos, qry, nil, -1, now)
		if e != nil {
			failures = append(failures, shardFailure{index: ix.name, indexUUID: ix.uuid, cause: e})
			continue
		}
		hits = append(hits, res.hits...)
	}
	if len(failures) > 0 {
		writeError(q.w, q.r, searchPhaseFailure(failures))
		return
	}
	total := len(hits)
	if maxDocs > 0 && total > maxDocs {
		total = maxDocs
	}
	deleted, conflicts := 0, 0
	var bulkFailures []obj
	status := http.StatusOK
	touched := map[*index]bool{}
	for _, h := range hits {
		if maxDocs > 0 && deleted >= maxDocs {
			break
		}
		_, err := h.ix.apply(writeOp{kind: "delete", id: h.d.id, ifSeqNo: h.d.seqNo, ifPrimaryTerm: 1}, now)
		touched[h.ix] = true
		if err != nil {
			conflicts++
			if !proceed {
				bulkFailures = append(bulkFailures, obj{{"index", h.ix.name}, {"id", h.d.id}, {"cause", err}, {"status", err.httpStatus()}})
				status = err.httpStatus()
				break
			}
			continue
		}
		deleted++
	}
	if refresh {
		for ix := range touched {
			ix.refresh(time.Now())
		}
	}
	batches := 0
	if len(hits) > 0 {
		batches = (min(len(hits), max(total, 1)) + scrollSize - 1) / scrollSize
	}
	if bulkFailures == nil {
		bulkFailures = []obj{}
	}
	writeJSON(q.w, q.r, status, obj{
		{"took", tookMillis(start)}, {"timed_out", false}, {"total", total}, {"deleted", deleted}, {"batches", batches},
		{"version_conflicts", conflicts}, {"noops", 0}, {"retries", obj{{"bulk", 0}, {"search", 0}}},
		{"throttled_millis", 0}, {"requests_per_second", -1.0}, {"throttled_until_millis", 0}, {"failures", bulkFailures},
	})
}
