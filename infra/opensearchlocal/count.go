package opensearchlocal

import (
	"net/http"
	"strings"
	"time"
)

// handleCount serves /_count and /{index}/_count.
func (s *Server) handleCount(q *request, args []string) {
	expr := "_all"
	if len(args) > 0 {
		expr = args[0]
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
			if m.key != "query" {
				writeError(q.w, q.r, errParsingAtKey(v, m, "request does not support [%s]", m.key))
				return
			}
			var e *osError
			if qry, e = parseQuery(m.val); e != nil {
				writeError(q.w, q.r, e)
				return
			}
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
	if _, ok := qry.(*qHybrid); ok {
		writeError(q.w, q.r, errUnsupported("a hybrid query in _count"))
		return
	}
	count := 0
	var failures []shardFailure
	now := time.Now()
	for pos, ix := range ixs {
		res, e := searchIndex(ix, pos, qry, nil, 0, now)
		if e != nil {
			failures = append(failures, shardFailure{index: ix.name, indexUUID: ix.uuid, cause: e})
			continue
		}
		count += res.total
	}
	if len(failures) > 0 && len(failures) == len(ixs) {
		writeError(q.w, q.r, searchPhaseFailure(failures))
		return
	}
	writeJSON(q.w, q.r, http.StatusOK, obj{{"count", count}, {"_shards", shardsObj(ixs, failures)}})
}
