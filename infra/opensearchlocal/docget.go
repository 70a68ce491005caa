package opensearchlocal

import (
	"net/http"
	"net/url"
	"strings"
	"time"
)

// handleGetDoc serves GET and HEAD /{index}/_doc/{id} (RestGetAction). Like OpenSearch's get it
// is real-time by default: it reads the latest write, refreshed or not; realtime=false reads
// what searches see. HEAD answers 200 or 404 with no body.
func (s *Server) handleGetDoc(q *request, args []string) {
	name, id := args[0], args[1]
	head := q.r.Method == http.MethodHead
	fail := func(e *osError) {
		if head {
			writeHead(q.w, e.httpStatus())
			return
		}
		writeError(q.w, q.r, e)
	}
	realtime, e := q.boolParam("realtime", true)
	if e != nil {
		fail(e)
		return
	}
	refresh, e := q.boolParam("refresh", false)
	if e != nil {
		fail(e)
		return
	}
	var src sourceFilter
	sourceParams(q.params, &src)
	ix := s.lookup(name)
	if ix == nil {
		fail(errIndexNotFound(name))
		return
	}
	now := time.Now()
	if refresh {
		ix.refresh(now)
	}
	d := ix.get(id, realtime, now)
	switch {
	case d == nil && head:
		writeHead(q.w, http.StatusNotFound)
	case d == nil:
		writeJSON(q.w, q.r, http.StatusNotFound, obj{{"_index", ix.name}, {"_id", id}, {"found", false}})
	case head:
		writeHead(q.w, http.StatusOK)
	default:
		o := obj{{"_index", ix.name}, {"_id", d.id}, {"_version", d.version}, {"_seq_no", d.seqNo}, {"_primary_term", 1}, {"found", true}}
		if !src.off && d.source.raw != nil {
			if len(src.includes) > 0 || len(src.excludes) > 0 {
				o = append(o, kv{"_source", filterSource(d.source.parsed(), src.includes, src.excludes)})
			} else {
				o = append(o, kv{"_source", rawJSON(d.source.bytes())})
			}
		}
		writeJSON(q.w, q.r, http.StatusOK, o)
	}
}

// get returns the document id: its latest version (realtime) or the one the last refresh
// published; nil if there is none.
func (ix *index) get(id string, realtime bool, now time.Time) *doc {
	if realtime {
		ix.mu.Lock()
		defer ix.mu.Unlock()
		if ix.closed {
			return nil
		}
		return ix.docs[id]
	}
	snap, _ := ix.searcher(now)
	for _, d := range snap.docs {
		if d.id == id {
			return d
		}
	}
	return nil
}

// handleDeleteDoc serves DELETE /{index}/_doc/{id}. As in OpenSearch a delete does not create
// a missing index: it answers index_not_found.
func (s *Server) handleDeleteDoc(q *request, args []string) {
	name, id := args[0], args[1]
	policy, e := refreshPolicy(q)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	op := writeOp{kind: "delete", id: id, ifSeqNo: unsetSeqNo}
	if e := readIfSeqNo(q, &op); e != nil {
		writeError(q.w, q.r, e)
		return
	}
	ix := s.lookup(name)
	if ix == nil {
		writeError(q.w, q.r, errIndexNotFound(name))
		return
	}
	ix.writeOne(q, op, policy)
}

// afterWrite applies a write's refresh policy: true refreshes now (forced_refresh), wait_for
// waits for the next refresh. ok is false when the client went away while waiting.
func (ix *index) afterWrite(q *request, policy string) (forced, ok bool) {
	switch policy {
	case "true":
		ix.refresh(time.Now())
		return true, true
	case "wait_for":
		select {
		case <-ix.waitForRefresh():
		case <-q.r.Context().Done():
			return false, false
		}
	}
	return false, true
}

// sourceParams reads the _source, _source_includes and _source_excludes query parameters.
func sourceParams(p url.Values, f *sourceFilter) {
	if p.Has("_source") {
		switch v := p.Get("_source"); v {
		case "true", "":
			*f = sourceFilter{}
		case "false":
			*f = sourceFilter{off: true}
		default:
			*f = sourceFilter{includes: strings.Split(v, ",")}
		}
	}
	if p.Has("_source_includes") {
		f.off = false
		f.includes = strings.Split(p.Get("_source_includes"), ",")
	}
	if p.Has("_source_excludes") {
		f.off = false
		f.excludes = strings.Split(p.Get("_source_excludes"), ",")
	}
}
