package opensearchlocal

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// writeOp is one document write (index API, bulk item, delete-by-query delete).
type writeOp struct {
	kind          string // index, create, delete, update
	id            string
	source        []byte
	ifSeqNo       int64 // -2: unset
	ifPrimaryTerm int64
	upd           *updateBody
	line          int // bulk action line, for messages
}

// writeResult is a write's outcome as the index API and bulk items report it.
type writeResult struct {
	index   string
	id      string
	version int64
	result  string
	seqNo   int64
	status  int
	noop    bool
	doc     *doc // the resulting document (update with _source)
}

const unsetSeqNo = -2

// snapshot is what a refresh published: the searchable documents and their term statistics.
type snapshot struct {
	docs  []*doc // in Lucene doc order
	stats map[string]*fieldStats
}

// fieldStats are a field's collection statistics for BM25.
type fieldStats struct {
	docCount int64
	sumTTF   int64
	df       map[string]int64
}

// apply performs one write under the index lock.
func (ix *index) apply(op writeOp, now time.Time) (writeResult, *osError) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return writeResult{}, errIndexNotFound(ix.name)
	}
	res := writeResult{index: ix.name, id: op.id}
	cur := ix.docs[op.id]
	if op.ifSeqNo != unsetSeqNo {
		if cur == nil {
			return res, ix.conflict(op.id, fmt.Sprintf("required seqNo [%d], primary term [%d]. but no document was found", op.ifSeqNo, op.ifPrimaryTerm))
		}
		if cur.seqNo != op.ifSeqNo || op.ifPrimaryTerm != 1 {
			return res, ix.conflict(op.id, fmt.Sprintf("required seqNo [%d], primary term [%d]. current document has seqNo [%d] and primary term [1]", op.ifSeqNo, op.ifPrimaryTerm, cur.seqNo))
		}
	}
	switch op.kind {
	case "delete":
		res.seqNo = ix.nextSeqNo()
		if cur == nil {
			res.version = ix.tombVersion(op.id, now) + 1
			res.result, res.status = "not_found", http.StatusNotFound
		} else {
			res.version = cur.version + 1
			res.result, res.status = "deleted", http.StatusOK
			delete(ix.docs, op.id)
			ix.dirty = true
		}
		ix.tombs[op.id] = tomb{version: res.version, seqNo: res.seqNo, at: now}
		return res, nil
	case "update":
		return ix.update(op, cur, now)
	}
	if op.kind == "create" && cur != nil {
		return res, ix.conflict(op.id, fmt.Sprintf("document already exists (current version [%d])", cur.version))
	}
	return ix.store(op.id, op.source, cur, now)
}

// store indexes a source as the new version of id (lock held).
func (ix *index) store(id string, source []byte, cur *doc, now time.Time) (writeResult, *osError) {
	res := writeResult{index: ix.name, id: id}
	pd, err := parseSource(ix.m, id, source)
	if err != nil {
		return res, err
	}
	if pd.root != nil {
		m := *ix.m
		m.root = pd.root
		ix.m = &m
	}
	d := &doc{id: id, fields: pd.fields}
	if ix.m.sourceEnabled {
		if len(ix.m.sourceIncludes) > 0 || len(ix.m.sourceExcludes) > 0 {
			d.source = storedSource{raw: filterSource(pd.val, ix.m.sourceIncludes, ix.m.sourceExcludes).raw()}
		} else {
			d.source = compactSource(source, pd.spans)
		}
	}
	if cur != nil {
		d.version = cur.version + 1
		res.result, res.status = "updated", http.StatusOK
	} else {
		d.version = ix.tombVersion(id, now) + 1
		res.result, res.status = "created", http.StatusCreated
	}
	delete(ix.tombs, id)
	d.seqNo = ix.nextSeqNo()
	ix.order++
	d.order = ix.order
	ix.docs[id] = d
	ix.dirty = true
	res.version, res.seqNo, res.doc = d.version, d.seqNo, d
	return res, nil
}

func (ix *index) nextSeqNo() int64 {
	n := ix.seqNo
	ix.seqNo++
	return n
}

// tombVersion is the version a recently deleted id had (0 if none, or if it was collected).
func (ix *index) tombVersion(id string, now time.Time) int64 {
	t, ok := ix.tombs[id]
	if !ok {
		return 0
	}
	if now.Sub(t.at) > gcDeletes {
		delete(ix.tombs, id)
		return 0
	}
	return t.version
}

func (ix *index) conflict(id, detail string) *osError {
	return (&osError{typ: "version_conflict_engine_exception", reason: "[" + id + "]: version conflict, " + detail,
		status: http.StatusConflict}).inShard(ix)
}

// scheduledRefresh is the periodic refresh (index.refresh_interval). A shard nobody searched
// for 30 s skips it unless the interval was set explicitly ("search idle"); the next search
// then refreshes first, so its writes are still seen.
func (ix *index) scheduledRefresh(now time.Time) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed || ix.refreshInterval <= 0 || now.Sub(ix.lastRefresh) < ix.refreshInterval {
		return
	}
	if !ix.refreshExplicit && now.Sub(ix.lastSearch) > searchIdleAfter && len(ix.waiters) == 0 {
		return
	}
	ix.refreshLocked(now)
}

// refresh makes every write so far searchable.
func (ix *index) refresh(now time.Time) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.refreshLocked(now)
}

func (ix *index) refreshLocked(now time.Time) {
	ix.lastRefresh = now
	if ix.dirty {
		ix.snap = ix.buildSnapshot()
		ix.dirty = false
	}
	for _, w := range ix.waiters {
		close(w)
	}
	ix.waiters = nil
}

// waitForRefresh returns a channel closed at the next refresh (refresh=wait_for).
func (ix *index) waitForRefresh() <-chan struct{} {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ch := make(chan struct{})
	if ix.closed {
		close(ch)
		return ch
	}
	ix.waiters = append(ix.waiters, ch)
	return ch
}

// searcher returns the searchable snapshot, refreshing first if the shard was search-idle.
func (ix *index) searcher(now time.Time) (*snapshot, *mapping) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ix.refreshExplicit && now.Sub(ix.lastSearch) > searchIdleAfter && ix.dirty {
		ix.refreshLocked(now)
	}
	ix.lastSearch = now
	return ix.snap, ix.m
}

func (ix *index) buildSnapshot() *snapshot {
	docs := make([]*doc, 0, len(ix.docs))
	for _, d := range ix.docs {
		docs = append(docs, d)
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].order < docs[j].order })
	stats := map[string]*fieldStats{}
	for _, d := range docs {
		for path, fd := range d.fields {
			if fd.tf == nil && fd.terms == nil {
				continue
			}
			st := stats[path]
			if st == nil {
				st = &fieldStats{df: map[string]int64{}}
				stats[path] = st
			}
			st.docCount++
			if fd.tf != nil {
				st.sumTTF += int64(fd.length)
				for t := range fd.tf {
					st.df[t]++
				}
			} else {
				seen := map[string]bool{}
				for _, t := range fd.terms {
					if !seen[t] {
						seen[t] = true
						st.df[t]++
						st.sumTTF++ // keyword fields index docs only: sumTotalTermFreq = sumDocFreq
					}
				}
			}
		}
	}
	return &snapshot{docs: docs, stats: stats}
}

// refreshPolicy reads the refresh parameter (WriteRequest.RefreshPolicy.parse).
func refreshPolicy(q *request) (string, *osError) {
	if !q.params.Has("refresh") {
		return "false", nil
	}
	switch v := q.params.Get("refresh"); v {
	case "", "true":
		return "true", nil
	case "false", "wait_for":
		return v, nil
	default:
		return "", errIllegalArgument("Unknown value for refresh: [%s].", v)
	}
}

// getOrCreate returns the named index, creating it with defaults when missing (OpenSearch's
// action.auto_create_index is true by default).
func (s *Server) getOrCreate(name string) (*index, *osError) {
	s.mu.RLock()
	ix := s.indices[name]
	s.mu.RUnlock()
	if ix != nil {
		return ix, nil
	}
	if e := validateIndexName(name); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ix = s.indices[name]; ix == nil {
		ix, _ = newIndex(name, nil)
		s.indices[name] = ix
	}
	return ix, nil
}

func (s *Server) lookup(name string) *index {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.indices[name]
}

// handleDoc serves the index API: POST /{index}/_doc and PUT|POST /{index}/_doc/{id}.
func (s *Server) handleDoc(q *request, args []string) {
	name := args[0]
	id := ""
	if len(args) > 1 {
		id = args[1]
	}
	policy, e := refreshPolicy(q)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	kind := "index"
	switch ot := q.params.Get("op_type"); ot {
	case "", "index":
	case "create":
		kind = "create"
	default:
		writeError(q.w, q.r, errIllegalArgument("opType must be 'create' or 'index', found: [%s]", ot))
		return
	}
	op := writeOp{kind: kind, id: id, source: q.body, ifSeqNo: unsetSeqNo}
	if e := readIfSeqNo(q, &op); e != nil {
		writeError(q.w, q.r, e)
		return
	}
	if len(strings.TrimSpace(string(q.body))) == 0 {
		writeError(q.w, q.r, errParse("request body is required"))
		return
	}
	if len(id) > 512 {
		writeError(q.w, q.r, errValidation(fmt.Sprintf("id [%s] is too long, must be no longer than 512 bytes but was: %d", id, len(id))))
		return
	}
	if ra, e := q.boolParam("require_alias", false); e != nil || ra {
		if e == nil {
			e = &osError{typ: "index_not_found_exception", reason: "no such index [" + name + "] and [require_alias] request flag is [true] and [" + name + "] is not an alias",
				status: http.StatusNotFound, meta: obj{{"index", name}, {"index_uuid", "_na_"}}}
		}
		writeError(q.w, q.r, e)
		return
	}
	ix, e := s.getOrCreate(name)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	if op.id == "" {
		op.id = randomID(15)
	}
	ix.writeOne(q, op, policy)
}

// writeOne applies a single-document write (index, create, delete) and answers it: the write's
// result, refreshed as policy asks.
func (ix *index) writeOne(q *request, op writeOp, policy string) {
	res, e := ix.apply(op, time.Now())
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	forced, ok := ix.afterWrite(q, policy)
	if !ok {
		return
	}
	writeJSON(q.w, q.r, res.status, ix.writeResponse(res, forced, false))
}

func readIfSeqNo(q *request, op *writeOp) *osError {
	if !q.params.Has("if_seq_no") && !q.params.Has("if_primary_term") {
		return nil
	}
	seq, err1 := strconv.ParseInt(q.params.Get("if_seq_no"), 10, 64)
	term, err2 := strconv.ParseInt(q.params.Get("if_primary_term"), 10, 64)
	if err1 != nil || err2 != nil || seq < 0 || term <= 0 {
		return errValidation("ifSeqNo is unassigned, but primary term is [" + q.params.Get("if_primary_term") + "]")
	}
	op.ifSeqNo, op.ifPrimaryTerm = seq, term
	return nil
}

// writeResponse is WriteResponseBase (the index API body and the bulk item body).
func (ix *index) writeResponse(res writeResult, forced, bulkItem bool) obj {
	o := obj{{"_index", res.index}, {"_id", res.id}, {"_version", res.version}, {"result", res.result}}
	if forced {
		o = append(o, kv{"forced_refresh", true})
	}
	if res.noop {
		o = append(o, kv{"_shards", obj{{"total", 0}, {"successful", 0}, {"failed", 0}}})
	} else {
		o = append(o, kv{"_shards", obj{{"total", 1 + ix.replicas}, {"successful", 1}, {"failed", 0}}})
	}
	o = append(o, kv{"_seq_no", res.seqNo}, kv{"_primary_term", 1})
	if bulkItem {
		o = append(o, kv{"status", res.status})
	}
	return o
}

// handleRefresh serves /_refresh and /{index}/_refresh.
func (s *Server) handleRefresh(q *request, args []string) {
	expr := "_all"
	if len(args) > 0 {
		expr = args[0]
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
	total, ok := 0, 0
	now := time.Now()
	for _, ix := range ixs {
		ix.refresh(now)
		total += ix.shards * (1 + ix.replicas)
		ok += ix.shards
	}
	writeJSON(q.w, q.r, http.StatusOK, obj{{"_shards", obj{{"total", total}, {"successful", ok}, {"failed", 0}}}})
}
