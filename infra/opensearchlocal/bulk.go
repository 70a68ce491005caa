package opensearchlocal

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// bulkItem is one parsed action of a _bulk body.
type bulkItem struct {
	action string
	index  string
	op     writeOp
	err    *osError // an item-level failure known before execution
}

// updateBody is the document line of a bulk update (UpdateRequest, without scripts).
type updateBody struct {
	doc         *jv
	upsert      *jv
	docAsUpsert bool
	detectNoop  bool
}

var validActions = []string{"create", "delete", "index", "update"}

// parseBulk follows OpenSearch 2.x's BulkRequestParser line by line.
func parseBulk(data []byte, defaultIndex string) ([]bulkItem, *osError) {
	var items []bulkItem
	line, from := 0, 0
	next := func() (int, *osError) {
		i := bytes.IndexByte(data[from:], '\n')
		if i < 0 {
			if from != len(data) {
				return -1, errIllegalArgument("The bulk request must be terminated by a newline [\\n]")
			}
			return -1, nil
		}
		return from + i, nil
	}
	for {
		marker, e := next()
		if e != nil {
			return nil, e
		}
		if marker < 0 {
			break
		}
		line++
		actionLine := bytes.TrimSuffix(data[from:marker], []byte{'\r'})
		from = marker + 1
		if len(bytes.TrimSpace(actionLine)) == 0 {
			continue
		}
		v, err := parseJSON(actionLine)
		if err != nil {
			return nil, errJSON(actionLine, err)
		}
		if v.k != kObject {
			return nil, errIllegalArgument("Malformed action/metadata line [%d], expected START_OBJECT but found [%s]", line, v.tokenName())
		}
		if len(v.obj) == 0 {
			return nil, errIllegalArgument("Malformed action/metadata line [%d], expected FIELD_NAME but found [END_OBJECT]", line)
		}
		action := v.obj[0].key
		if !contains(validActions, action) {
			return nil, errIllegalArgument("Malformed action/metadata line [%d], expected one of [create, delete, index, update] but found [%s]", line, action)
		}
		it := bulkItem{action: action, index: defaultIndex, op: writeOp{kind: action, ifSeqNo: unsetSeqNo, line: line}}
		meta := v.obj[0].val
		switch meta.k {
		case kObject:
			if e := it.readMeta(meta, line); e != nil {
				return nil, e
			}
		default:
			return nil, errIllegalArgument("Malformed action/metadata line [%d], expected START_OBJECT or END_OBJECT but found [%s]", line, meta.tokenName())
		}
		if action != "delete" {
			marker, e := next()
			if e != nil {
				return nil, e
			}
			if marker < 0 {
				break
			}
			line++
			src := bytes.TrimSuffix(data[from:marker], []byte{'\r'})
			from = marker + 1
			if action == "update" {
				upd, e := parseUpdateBody(src)
				if e != nil {
					if e.typ == "illegal_argument_exception" && strings.HasPrefix(e.reason, "opensearchlocal:") {
						it.err = e
					} else {
						return nil, e
					}
				}
				it.op.upd = upd
			} else {
				it.op.source = src
			}
		}
		items = append(items, it)
	}
	var missing []string
	for _, it := range items {
		if it.index == "" {
			missing = append(missing, "index is missing")
		}
		if it.op.id == "" && (it.action == "delete" || it.action == "update") {
			missing = append(missing, "id is missing")
		}
	}
	if len(items) == 0 {
		missing = append(missing, "no requests added")
	}
	if len(missing) > 0 {
		return nil, errValidation(missing...)
	}
	return items, nil
}

func (it *bulkItem) readMeta(meta *jv, line int) *osError {
	for _, mm := range meta.obj {
		val := mm.val
		if val.k == kArray {
			return errIllegalArgument("Malformed action/metadata line [%d], expected a simple value for field [%s] but found [START_ARRAY]", line, mm.key)
		}
		if val.k == kObject && mm.key != "_source" {
			return errIllegalArgument("Malformed action/metadata line [%d], expected a simple value for field [%s] but found [START_OBJECT]", line, mm.key)
		}
		if val.k == kNull {
			continue
		}
		switch mm.key {
		case "_index":
			it.index = val.text()
		case "_id":
			it.op.id = val.text()
		case "routing":
			// one shard: routing changes nothing here
		case "op_type":
			if it.action == "index" && val.text() == "create" {
				it.op.kind = "create"
			}
		case "if_seq_no":
			n, ok := val.int()
			if !ok {
				return errIllegalArgument("Current token (%s) not numeric, can not use numeric value accessors", val.tokenName())
			}
			it.op.ifSeqNo = n
		case "if_primary_term":
			n, ok := val.int()
			if !ok {
				return errIllegalArgument("Current token (%s) not numeric, can not use numeric value accessors", val.tokenName())
			}
			it.op.ifPrimaryTerm = n
		case "require_alias":
			if b, _ := val.boolean(); b {
				it.err = &osError{typ: "index_not_found_exception", reason: "[require_alias] request flag is [true] and [" + it.index + "] is not an alias",
					status: http.StatusNotFound, meta: obj{{"index", it.index}, {"index_uuid", "_na_"}}}
			}
		case "version", "version_type", "pipeline", "retry_on_conflict", "_source":
			return errUnsupported("the bulk metadata parameter [%s]", mm.key)
		default:
			return errIllegalArgument("Action/metadata line [%d] contains an unknown parameter [%s]", line, mm.key)
		}
	}
	if it.op.ifSeqNo != unsetSeqNo && it.op.ifPrimaryTerm == 0 {
		it.op.ifPrimaryTerm = -1
	}
	return nil
}

var updateFields = []string{"doc", "upsert", "doc_as_upsert", "detect_noop", "_source", "script", "scripted_upsert", "if_seq_no", "if_primary_term"}

// parseUpdateBody reads an update document line (UpdateRequest.fromXContent).
func parseUpdateBody(src []byte) (*updateBody, *osError) {
	v, err := parseJSON(src)
	if err != nil {
		return nil, errJSON(src, err)
	}
	if v.k != kObject {
		return nil, errParse("Failed to derive xcontent")
	}
	u := &updateBody{detectNoop: true}
	for _, mm := range v.obj {
		switch mm.key {
		case "doc":
			if mm.val.k != kObject {
				return nil, errXContent(mm.val.pos(), "[UpdateRequest] doc doesn't support values of type: %s", mm.val.tokenName())
			}
			u.doc = mm.val
		case "upsert":
			if mm.val.k != kObject {
				return nil, errXContent(mm.val.pos(), "[UpdateRequest] upsert doesn't support values of type: %s", mm.val.tokenName())
			}
			u.upsert = mm.val
		case "doc_as_upsert", "detect_noop":
			b, ok := mm.val.boolean()
			if !ok {
				return nil, errXContent(mm.val.pos(), "[UpdateRequest] failed to parse field [%s]", mm.key)
			}
			if mm.key == "doc_as_upsert" {
				u.docAsUpsert = b
			} else {
				u.detectNoop = b
			}
		case "script", "scripted_upsert":
			return nil, errUnsupported("scripted updates")
		case "_source", "if_seq_no", "if_primary_term":
			return nil, errUnsupported("the update parameter [%s]", mm.key)
		default:
			return nil, errUnknownField(v, mm, "UpdateRequest", updateFields)
		}
	}
	if u.doc == nil {
		return nil, errValidation("script or doc is missing")
	}
	return u, nil
}

// update applies a partial-document update (lock held).
func (ix *index) update(op writeOp, cur *doc, now time.Time) (writeResult, *osError) {
	u := op.upd
	if cur == nil {
		switch {
		case u.upsert != nil:
			return ix.store(op.id, u.upsert.raw(), nil, now)
		case u.docAsUpsert:
			return ix.store(op.id, u.doc.raw(), nil, now)
		}
		return writeResult{}, (&osError{typ: "document_missing_exception", reason: "[" + op.id + "]: document missing", status: http.StatusNotFound}).inShard(ix)
	}
	base := cur.source.parsed()
	if base == nil {
		return writeResult{}, errIllegalArgument("[%s]: document source missing", op.id).inShard(ix)
	}
	merged := mergeSource(base, u.doc)
	if u.detectNoop && bytes.Equal(merged.raw(), base.raw()) {
		return writeResult{index: ix.name, id: op.id, version: cur.version, seqNo: cur.seqNo, result: "noop", status: http.StatusOK, noop: true, doc: cur}, nil
	}
	return ix.store(op.id, merged.raw(), cur, now)
}

// mergeSource is XContentHelper.update: objects merge recursively, anything else is replaced.
func mergeSource(base, changes *jv) *jv {
	out := &jv{k: kObject, src: base.src, obj: append([]member(nil), base.obj...)}
	for _, c := range changes.obj {
		replaced := false
		for i, m := range out.obj {
			if m.key == c.key {
				if m.val.k == kObject && c.val.k == kObject {
					out.obj[i].val = mergeSource(m.val, c.val)
				} else {
					out.obj[i].val = c.val
				}
				replaced = true
				break
			}
		}
		if !replaced {
			out.obj = append(out.obj, c)
		}
	}
	return out
}

// handleBulk serves /_bulk and /{index}/_bulk.
func (s *Server) handleBulk(q *request, args []string) {
	start := time.Now()
	def := ""
	if len(args) > 0 {
		def = args[0]
	}
	policy, e := refreshPolicy(q)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	requireAlias, e := q.boolParam("require_alias", false)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	items, e := parseBulk(q.body, def)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	for i := range items {
		if items[i].op.id == "" && (items[i].op.kind == "index" || items[i].op.kind == "create") {
			items[i].op.id = randomID(15)
		}
	}
	out := make([]obj, len(items))
	touched := map[*index]bool{}
	hasErrors := false
	now := time.Now()
	for i, it := range items {
		res, ix, err := s.bulkExec(it, requireAlias, now)
		if err != nil {
			hasErrors = true
			out[i] = obj{{it.action, obj{{"_index", it.index}, {"_id", it.op.id}, {"status", err.httpStatus()}, {"error", err}}}}
			continue
		}
		touched[ix] = true
		out[i] = obj{{it.action, ix.writeResponse(res, policy == "true", true)}}
	}
	switch policy {
	case "true":
		for ix := range touched {
			ix.refresh(time.Now())
		}
	case "wait_for":
		for ix := range touched {
			select {
			case <-ix.waitForRefresh():
			case <-q.r.Context().Done():
				return
			}
		}
	}
	writeJSON(q.w, q.r, http.StatusOK, obj{{"took", tookMillis(start)}, {"errors", hasErrors}, {"items", out}})
}

func (s *Server) bulkExec(it bulkItem, requireAlias bool, now time.Time) (writeResult, *index, *osError) {
	if it.err != nil {
		return writeResult{}, nil, it.err
	}
	if requireAlias {
		return writeResult{}, nil, &osError{typ: "index_not_found_exception", reason: "[require_alias] request flag is [true] and [" + it.index + "] is not an alias",
			status: http.StatusNotFound, meta: obj{{"index", it.index}, {"index_uuid", "_na_"}}}
	}
	var ix *index
	if it.action == "delete" {
		ix = s.lookup(it.index)
		if ix == nil {
			return writeResult{}, nil, errIndexNotFound(it.index)
		}
	} else {
		var e *osError
		if ix, e = s.getOrCreate(it.index); e != nil {
			return writeResult{}, nil, e
		}
	}
	if len(it.op.id) > 512 {
		return writeResult{}, nil, errValidation(fmt.Sprintf("id [%s] is too long, must be no longer than 512 bytes but was: %d", it.op.id, len(it.op.id)))
	}
	res, e := ix.apply(it.op, now)
	if e != nil {
		return res, nil, e
	}
	return res, ix, nil
}
