package opensearchlocal

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// index is one index: one primary shard in memory. Writes go to docs (the "index writer"); a
// refresh publishes them to snap, which searches read (near-real-time visibility).
type index struct {
	name, uuid      string
	created         time.Time
	shards          int
	replicas        int
	settings        []kv // flattened index.* settings as given, values as strings
	refreshInterval time.Duration
	refreshExplicit bool // index.refresh_interval was set (search-idle applies only when not)
	knn             bool // index.knn: a k-NN index (ANN methods, knn queries)
	maxResultWindow int

	mu          sync.Mutex
	m           *mapping
	docs        map[string]*doc
	tombs       map[string]tomb
	seqNo       int64
	order       int64
	dirty       bool
	snap        *snapshot
	lastRefresh time.Time
	lastSearch  time.Time
	waiters     []chan struct{}
	closed      bool
}

// doc is one version of a document.
type doc struct {
	id      string
	version int64
	seqNo   int64
	order   int64 // Lucene doc order: ties in score sort by it
	source  storedSource
	fields  map[string]*fieldData
}

// tomb remembers a deleted document's version (index.gc_deletes, 60 s).
type tomb struct {
	version int64
	seqNo   int64
	at      time.Time
}

const (
	gcDeletes       = 60 * time.Second
	searchIdleAfter = 30 * time.Second
)

// indexSettings are the settings the stand-in implements; everything else OpenSearch knows is an
// out-of-slice rejection, and anything else an unknown setting.
var indexSettings = []string{"index.number_of_shards", "index.number_of_replicas", "index.refresh_interval", "index.knn",
	"index.knn.algo_param.ef_search", "index.max_result_window"}

var otherSettingPrefixes = []string{"index.analysis.", "index.similarity.", "index.mapping.", "index.routing", "index.blocks.",
	"index.search.", "index.translog.", "index.merge.", "index.sort.", "index.codec", "index.hidden", "index.auto_expand_replicas",
	"index.max_inner_result_window", "index.highlight.", "index.queries.", "index.default_pipeline", "index.final_pipeline",
	"index.replication.type", "index.knn.space_type", "index.knn.advanced.", "index.knn.memory_optimized_search",
	"index.knn.derived_source.enabled", "index.query.", "index.number_of_routing_shards", "index.store.", "index.shard.",
	"index.unassigned.", "index.write.", "index.priority", "index.max_ngram_diff", "index.max_shingle_diff",
	"index.max_docvalue_fields_search", "index.max_script_fields", "index.max_terms_count", "index.max_regex_length",
	"index.max_refresh_listeners", "index.max_slices_per_scroll", "index.gc_deletes", "index.default_search_pipeline",
	"index.remote_store.", "index.plugins.", "index.opendistro.", "index.indexing.", "index.load_fixed_bitset_filters_eagerly",
	"index.check_on_startup", "index.format", "index.compound_format", "index.optimize_auto_generated_id"}

// handleIndex serves PUT (create), GET, HEAD and DELETE on /{index}.
func (s *Server) handleIndex(q *request, args []string) {
	name := args[0]
	switch q.r.Method {
	case http.MethodPut:
		s.createIndex(q, name)
	case http.MethodHead:
		ignore, _ := q.boolParam("ignore_unavailable", false)
		ixs, err := s.resolve(name, ignore)
		if err != nil || len(ixs) == 0 {
			writeHead(q.w, http.StatusNotFound)
			return
		}
		writeHead(q.w, http.StatusOK)
	case http.MethodGet:
		ignore, e := q.boolParam("ignore_unavailable", false)
		if e != nil {
			writeError(q.w, q.r, e)
			return
		}
		flat, e := q.boolParam("flat_settings", false)
		if e != nil {
			writeError(q.w, q.r, e)
			return
		}
		ixs, err := s.resolve(name, ignore)
		if err != nil {
			writeError(q.w, q.r, err)
			return
		}
		out := obj{}
		for _, ix := range ixs {
			out = append(out, kv{ix.name, ix.describe(flat)})
		}
		writeJSON(q.w, q.r, http.StatusOK, out)
	case http.MethodDelete:
		ignore, e := q.boolParam("ignore_unavailable", false)
		if e != nil {
			writeError(q.w, q.r, e)
			return
		}
		ixs, err := s.resolve(name, ignore)
		if err != nil {
			writeError(q.w, q.r, err)
			return
		}
		s.mu.Lock()
		for _, ix := range ixs {
			if s.indices[ix.name] == ix {
				delete(s.indices, ix.name)
			}
		}
		s.mu.Unlock()
		for _, ix := range ixs {
			ix.close()
		}
		writeJSON(q.w, q.r, http.StatusOK, obj{{"acknowledged", true}})
	}
}

// validateIndexName applies MetadataCreateIndexService.validateIndexOrAliasName.
func validateIndexName(name string) *osError {
	switch {
	case strings.Contains(name, "#"):
		return errInvalidIndexName(name, "must not contain '#'")
	case strings.Contains(name, ":"):
		return errInvalidIndexName(name, "must not contain ':'")
	case strings.ContainsAny(name, "\\/*?\"<>| ,"):
		return errInvalidIndexName(name, `must not contain the following characters [ , ", *, \, <, |, ,, >, /, ?]`)
	case strings.HasPrefix(name, "_") || strings.HasPrefix(name, "-") || strings.HasPrefix(name, "+"):
		return errInvalidIndexName(name, "must not start with '_', '-', or '+'")
	case strings.ToLower(name) != name:
		return errInvalidIndexName(name, "must be lowercase")
	case name == "." || name == "..":
		return errInvalidIndexName(name, "must not be '.' or '..'")
	case len(name) > 255:
		return errInvalidIndexName(name, "index name is too long, ("+strconv.Itoa(len(name))+" > 255)")
	}
	return nil
}

// createIndex serves PUT /{index} (CreateIndexRequest: settings, mappings, aliases).
func (s *Server) createIndex(q *request, name string) {
	if e := validateIndexName(name); e != nil {
		writeError(q.w, q.r, e)
		return
	}
	var body *jv
	if len(strings.TrimSpace(string(q.body))) > 0 {
		v, err := parseJSON(q.body)
		if err != nil {
			writeError(q.w, q.r, errJSON(q.body, err))
			return
		}
		if v.k != kObject {
			writeError(q.w, q.r, errParse("Failed to derive xcontent"))
			return
		}
		body = v
	}
	ix, e := newIndex(name, body)
	if e != nil {
		writeError(q.w, q.r, e)
		return
	}
	s.mu.Lock()
	if old := s.indices[name]; old != nil {
		s.mu.Unlock()
		writeError(q.w, q.r, errIndexExists(name, old.uuid))
		return
	}
	s.indices[name] = ix
	s.mu.Unlock()
	writeJSON(q.w, q.r, http.StatusOK, obj{{"acknowledged", true}, {"shards_acknowledged", true}, {"index", name}})
}

// newIndex builds an index from a create body (nil for defaults).
func newIndex(name string, body *jv) (*index, *osError) {
	now := time.Now()
	ix := &index{name: name, uuid: randomID(16), created: now, shards: 1, replicas: 1,
		refreshInterval: time.Second, maxResultWindow: 10000, docs: map[string]*doc{}, tombs: map[string]tomb{},
		lastRefresh: now, lastSearch: now, snap: &snapshot{}}
	ix.m, _ = parseMapping(nil, false)
	if body == nil {
		return ix, nil
	}
	// Settings first: whether the index is a k-NN index decides what its mappings may say.
	if s := body.get("settings"); s != nil {
		if e := ix.applySettings(s); e != nil {
			return nil, e
		}
	}
	for _, mm := range body.obj {
		switch mm.key {
		case "settings":
		case "mappings":
			m, e := parseMapping(mm.val, ix.knn)
			if e != nil {
				return nil, e
			}
			ix.m = m
		case "aliases":
			if mm.val.k != kObject || len(mm.val.obj) > 0 {
				return nil, errUnsupported("index aliases")
			}
		default:
			return nil, errParse("unknown key [%s] for create index", mm.key)
		}
	}
	return ix, nil
}

// applySettings reads create-index settings (nested or flat, with or without the index. prefix).
func (ix *index) applySettings(v *jv) *osError {
	if v.k != kObject {
		return errParse("Failed to derive settings: expected an object")
	}
	var flat []kv
	var walk func(prefix string, v *jv)
	walk = func(prefix string, v *jv) {
		for _, mm := range v.obj {
			key := prefix + mm.key
			if mm.val.k == kObject {
				walk(key+".", mm.val)
				continue
			}
			val := mm.val.text()
			if mm.val.k == kArray {
				parts := make([]string, len(mm.val.arr))
				for i, e := range mm.val.arr {
					parts[i] = e.text()
				}
				val = strings.Join(parts, ",")
			}
			flat = append(flat, kv{key, val})
		}
	}
	walk("", v)
	for i := range flat {
		if !strings.HasPrefix(flat[i].k, "index.") {
			flat[i].k = "index." + flat[i].k
		}
	}
	for _, s := range flat {
		key, val := s.k, s.v.(string)
		switch key {
		case "index.number_of_shards":
			n, e := intSetting(key, val, 1, 1024)
			if e != nil {
				return e
			}
			ix.shards = n
		case "index.number_of_replicas":
			n, e := intSetting(key, val, 0, 1<<20)
			if e != nil {
				return e
			}
			ix.replicas = n
		case "index.max_result_window":
			n, e := intSetting(key, val, 1, 1<<31-1)
			if e != nil {
				return e
			}
			ix.maxResultWindow = n
		case "index.knn.algo_param.ef_search":
			if _, e := intSetting(key, val, 2, 1<<31-1); e != nil {
				return e
			}
		case "index.knn":
			if val != "true" && val != "false" {
				return errIllegalArgument("Failed to parse value [%s] as only [true] or [false] are allowed.", val)
			}
			ix.knn = val == "true"
		case "index.refresh_interval":
			d, e := parseTimeValue(key, val)
			if e != nil {
				return e
			}
			if d < 0 && d != -1 {
				return errIllegalArgument("failed to parse value [%s] for setting [%s], must be >= [-1]", val, key)
			}
			ix.refreshInterval = d
			ix.refreshExplicit = true
		default:
			for _, p := range otherSettingPrefixes {
				if strings.HasPrefix(key, p) || key == strings.TrimSuffix(p, ".") {
					return errUnsupported("the index setting [%s]", key)
				}
			}
			msg := "unknown setting [" + key + "]"
			if dym := didYouMean(key, indexSettings, 0.7); dym != "" {
				msg += dym
			} else {
				msg += " please check that any required plugins are installed, or check the breaking changes documentation for removed settings"
			}
			return errIllegalArgument("%s", msg)
		}
		ix.settings = append(ix.settings, s)
	}
	return nil
}

func intSetting(key, val string, lo, hi int) (int, *osError) {
	n, err := strconv.Atoi(val)
	if err != nil {
		return 0, errIllegalArgument("Failed to parse value [%s] for setting [%s]", val, key).withCause(
			&osError{typ: "number_format_exception", reason: "For input string: \"" + val + "\"", plain: true})
	}
	if n < lo {
		return 0, errIllegalArgument("Failed to parse value [%s] for setting [%s] must be >= %d", val, key, lo)
	}
	if n > hi {
		return 0, errIllegalArgument("Failed to parse value [%s] for setting [%s] must be <= %d", val, key, hi)
	}
	return n, nil
}

// parseTimeValue is OpenSearch's TimeValue.parseTimeValue; -1 stays -1 (a disabled interval).
func parseTimeValue(key, val string) (time.Duration, *osError) {
	s := strings.ToLower(strings.TrimSpace(val))
	if s == "-1" {
		return -1, nil
	}
	if s == "0" {
		return 0, nil
	}
	units := []struct {
		suffix string
		d      time.Duration
	}{{"nanos", time.Nanosecond}, {"micros", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second},
		{"m", time.Minute}, {"h", time.Hour}, {"d", 24 * time.Hour}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			num := strings.TrimSpace(strings.TrimSuffix(s, u.suffix))
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil {
				f, ferr := strconv.ParseFloat(num, 64)
				if ferr != nil {
					return 0, errIllegalArgument("failed to parse setting [%s] with value [%s] as a time value: unit is missing or unrecognized", key, val)
				}
				return time.Duration(f * float64(u.d)), nil
			}
			return time.Duration(n) * u.d, nil
		}
	}
	return 0, errIllegalArgument("failed to parse setting [%s] with value [%s] as a time value: unit is missing or unrecognized", key, val)
}

// describe is the index as GET /{index} shows it.
func (ix *index) describe(flat bool) obj {
	ix.mu.Lock()
	mappingOut := ix.m.render()
	ix.mu.Unlock()
	settings := []kv{
		{"index.creation_date", strconv.FormatInt(ix.created.UnixMilli(), 10)},
		{"index.number_of_shards", strconv.Itoa(ix.shards)},
		{"index.number_of_replicas", strconv.Itoa(ix.replicas)},
		{"index.uuid", ix.uuid},
		{"index.version.created", "136407827"},
		{"index.provided_name", ix.name},
	}
	for _, s := range ix.settings {
		if s.k == "index.number_of_shards" || s.k == "index.number_of_replicas" {
			continue
		}
		settings = append(settings, s)
	}
	sort.SliceStable(settings, func(i, j int) bool { return settings[i].k < settings[j].k })
	var settingsOut obj
	if flat {
		settingsOut = obj(settings)
	} else {
		settingsOut = nestSettings(settings)
	}
	return obj{{"aliases", obj{}}, {"mappings", mappingOut}, {"settings", settingsOut}}
}

// nestSettings turns flat "a.b.c" keys into nested objects (keys sorted, as OpenSearch prints).
func nestSettings(flat []kv) obj {
	root := obj{}
	for _, s := range flat {
		parts := strings.Split(s.k, ".")
		cur := &root
		for i, p := range parts {
			if i == len(parts)-1 {
				*cur = append(*cur, kv{p, s.v})
				break
			}
			var next *obj
			for j := range *cur {
				if (*cur)[j].k == p {
					if o, ok := (*cur)[j].v.(*obj); ok {
						next = o
					}
				}
			}
			if next == nil {
				next = &obj{}
				*cur = append(*cur, kv{p, next})
			}
			cur = next
		}
	}
	return root
}

// close wakes refresh waiters of a deleted index.
func (ix *index) close() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.closed = true
	for _, w := range ix.waiters {
		close(w)
	}
	ix.waiters = nil
}
