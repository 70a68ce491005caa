package opensearchlocal

import (
	"sort"
	"strconv"
	"strings"
)

// field is one mapped field: a leaf, a multi-field or an object.
type field struct {
	name            string // leaf name
	path            string // dotted full path
	typ             string // text, keyword, long, …, date, boolean, knn_vector, object
	params          obj    // the definition's parameters as given (minus type/properties/fields), for GET
	index           bool   // searchable
	norms           bool   // text length norms (BM25 length normalisation)
	ignoreAbove     int    // keyword: longer values are not indexed
	nullValue       *jv
	coerce          bool
	ignoreMalformed bool
	format          string
	knn             *knnField
	analyzer        string   // text: the index analyzer ("standard" unless the mapping names one)
	searchAnalyzer  string   // text: the search_analyzer as given ("" means the index analyzer)
	fields          []*field // multi-fields (title.keyword)
	props           []*field // object properties, sorted by name
	dynamic         string   // object: "true", "false", "strict"; "" inherits
	enabled         bool     // object: false keeps the object in _source only
}

// mapping is an index's root object mapping.
type mapping struct {
	root           *field
	sourceEnabled  bool
	sourceIncludes []string
	sourceExcludes []string
	sourceDef      *jv
	meta           *jv
	dateDetection  bool
}

var numericTypes = map[string]bool{"long": true, "integer": true, "short": true, "byte": true, "double": true, "float": true, "half_float": true}

// knownTypes are OpenSearch 2.19 field types the stand-in does not implement: mapping one is an
// out-of-slice rejection, not OpenSearch's "No handler for type".
var knownTypes = map[string]bool{
	"nested": true, "flat_object": true, "geo_point": true, "geo_shape": true, "ip": true, "binary": true,
	"scaled_float": true, "unsigned_long": true, "wildcard": true, "match_only_text": true, "rank_feature": true,
	"rank_features": true, "alias": true, "completion": true, "search_as_you_type": true, "token_count": true,
	"integer_range": true, "long_range": true, "float_range": true, "double_range": true, "date_range": true,
	"ip_range": true, "date_nanos": true, "join": true, "percolator": true, "constant_keyword": true,
	"derived": true, "star_tree": true, "semantic": true, "sparse_vector": true,
}

// Parameters per type: implemented ones, and the others OpenSearch accepts (out of slice here).
var (
	implParams = map[string][]string{
		"text":       {"analyzer", "search_analyzer", "index", "norms", "store", "fields", "meta"},
		"keyword":    {"ignore_above", "index", "doc_values", "store", "norms", "fields", "meta", "null_value"},
		"numeric":    {"index", "doc_values", "store", "meta", "null_value", "coerce", "ignore_malformed"},
		"boolean":    {"index", "doc_values", "store", "meta", "null_value"},
		"date":       {"format", "index", "doc_values", "store", "meta", "ignore_malformed"},
		"knn_vector": {"dimension", "method", "space_type", "data_type", "mode", "compression_level", "doc_values", "store", "meta"},
		"object":     {"properties", "dynamic", "enabled"},
	}
	otherParams = map[string][]string{
		"text":       {"search_quote_analyzer", "boost", "eager_global_ordinals", "fielddata", "fielddata_frequency_filter", "index_options", "index_phrases", "index_prefixes", "position_increment_gap", "similarity", "term_vector", "copy_to"},
		"keyword":    {"boost", "eager_global_ordinals", "index_options", "normalizer", "similarity", "split_queries_on_whitespace", "copy_to"},
		"numeric":    {"boost", "copy_to", "fields"},
		"boolean":    {"boost", "copy_to", "fields"},
		"date":       {"boost", "locale", "null_value", "copy_to", "fields", "print_format"},
		"knn_vector": {"model_id"},
		"object":     {},
	}
)

func paramGroup(typ string) string {
	if numericTypes[typ] {
		return "numeric"
	}
	return typ
}

// parseMapping reads a create-index "mappings" body. Errors are wrapped as OpenSearch's
// MapperService does: "Failed to parse mapping [_doc]: <cause>".
func parseMapping(v *jv, knnIndex bool) (*mapping, *osError) {
	m, err := parseMappingInner(v)
	if err == nil {
		err = checkKNNIndex(m.root, knnIndex)
	}
	if err != nil {
		return nil, errMapperParsing("Failed to parse mapping [_doc]: %s", err.reason).withCause(err)
	}
	return m, nil
}

func parseMappingInner(v *jv) (*mapping, *osError) {
	m := &mapping{root: &field{typ: "object", dynamic: "true", enabled: true, index: true}, sourceEnabled: true, dateDetection: true}
	if v == nil || v.k == kNull {
		return m, nil
	}
	if v.k != kObject {
		return nil, errMapperParsing("Expected map for property [mappings] but got a %s", javaClass(v))
	}
	// A typeless body may still be wrapped in "_doc" (OpenSearch accepts include_type_name-style bodies).
	if len(v.obj) == 1 && v.obj[0].key == "_doc" && v.obj[0].val.k == kObject {
		v = v.obj[0].val
	}
	var unsupported []string
	for _, mm := range v.obj {
		switch mm.key {
		case "properties":
			props, err := parseProperties(mm.val, "")
			if err != nil {
				return nil, err
			}
			m.root.props = props
		case "dynamic":
			d, err := parseDynamic(mm.val)
			if err != nil {
				return nil, err
			}
			m.root.dynamic = d
		case "_source":
			if err := m.parseSource(mm.val); err != nil {
				return nil, err
			}
		case "_meta":
			if mm.val.k != kObject {
				return nil, errMapperParsing("[_meta] must be an object, got %s[%s]", javaClass(mm.val), mm.val.text())
			}
			m.meta = mm.val
		case "date_detection":
			b, ok := mm.val.boolean()
			if !ok {
				return nil, errBoolValue(mm.val)
			}
			m.dateDetection = b
		case "numeric_detection":
			b, ok := mm.val.boolean()
			if !ok {
				return nil, errBoolValue(mm.val)
			}
			if b {
				return nil, errUnsupported("mapping parameter [numeric_detection: true]")
			}
		case "dynamic_templates", "_routing", "dynamic_date_formats", "_field_names", "enabled", "_size", "derived":
			return nil, errUnsupported("root mapping parameter [%s]", mm.key)
		default:
			unsupported = append(unsupported, "["+mm.key+" : "+javaValue(mm.val)+"]")
		}
	}
	if len(unsupported) > 0 {
		return nil, errMapperParsing("Root mapping definition has unsupported parameters:  %s", strings.Join(unsupported, " "))
	}
	return m, nil
}

func (m *mapping) parseSource(v *jv) *osError {
	if v.k != kObject {
		return errMapperParsing("Expected map for property [_source] but got a %s", javaClass(v))
	}
	m.sourceDef = v
	for _, mm := range v.obj {
		switch mm.key {
		case "enabled":
			b, ok := mm.val.boolean()
			if !ok {
				return errBoolValue(mm.val)
			}
			m.sourceEnabled = b
		case "includes", "excludes":
			list, ok := stringList(mm.val)
			if !ok {
				return errMapperParsing("Failed to parse [%s]: expected a list of strings", mm.key)
			}
			if mm.key == "includes" {
				m.sourceIncludes = list
			} else {
				m.sourceExcludes = list
			}
		default:
			return errMapperParsing("Mapping definition for [_source] has unsupported parameters:  [%s : %s]", mm.key, javaValue(mm.val))
		}
	}
	return nil
}

func parseDynamic(v *jv) (string, *osError) {
	switch v.text() {
	case "true", "false", "strict":
		return v.text(), nil
	case "strict_allow_templates", "false_allow_templates":
		return "", errUnsupported("dynamic [%s]", v.text())
	}
	return "", errIllegalArgument("Unrecognized dynamic value [%s]", v.text()) // as DynamicFieldsBuilder reports
}

func parseProperties(v *jv, parent string) ([]*field, *osError) {
	if v.k != kObject {
		return nil, errMapperParsing("Expected map for property [properties] on field [%s] but got a %s", strings.TrimSuffix(parent, "."), javaClass(v))
	}
	var out []*field
	for _, mm := range v.obj {
		name := mm.key
		if strings.TrimSpace(name) == "" {
			return nil, errIllegalArgument("name cannot be empty string")
		}
		if mm.val.k != kObject {
			return nil, errMapperParsing("Expected map for property [fields] on field [%s] but got a %s", name, javaClass(mm.val))
		}
		// "a.b" in a mapping is shorthand for an object a with a property b.
		if parts := strings.Split(name, "."); len(parts) > 1 {
			f, err := parseField(parts[len(parts)-1], parent+name, mm.val)
			if err != nil {
				return nil, err
			}
			for i := len(parts) - 2; i >= 0; i-- {
				f = &field{name: parts[i], path: parent + strings.Join(parts[:i+1], "."), typ: "object", enabled: true, index: true, props: []*field{f}}
			}
			out = mergeField(out, f)
			continue
		}
		f, err := parseField(name, parent+name, mm.val)
		if err != nil {
			return nil, err
		}
		out = mergeField(out, f)
	}
	sortFields(out)
	return out, nil
}

func mergeField(list []*field, f *field) []*field {
	for _, g := range list {
		if g.name == f.name && g.typ == "object" && f.typ == "object" {
			for _, p := range f.props {
				g.props = mergeField(g.props, p)
			}
			sortFields(g.props)
			return list
		}
	}
	return append(list, f)
}

func sortFields(fs []*field) { sort.Slice(fs, func(i, j int) bool { return fs[i].name < fs[j].name }) }

func parseField(name, path string, v *jv) (*field, *osError) {
	typ := "object"
	if t := v.get("type"); t != nil {
		if t.k != kString {
			return nil, errMapperParsing("No type specified for field [%s]", name)
		}
		typ = t.s
	} else if v.get("properties") == nil && v.get("dynamic") == nil && v.get("enabled") == nil && len(v.obj) > 0 {
		return nil, errMapperParsing("No type specified for field [%s]", name)
	}
	group := paramGroup(typ)
	if _, ok := implParams[group]; !ok {
		if knownTypes[typ] {
			return nil, errUnsupported("field type [%s] (field [%s])", typ, path)
		}
		return nil, errMapperParsing("No handler for type [%s] declared on field [%s]", typ, name)
	}
	f := &field{name: name, path: path, typ: typ, index: true, norms: typ == "text", coerce: true, enabled: true}
	if group == "object" && typ != "object" {
		return nil, errMapperParsing("No handler for type [%s] declared on field [%s]", typ, name)
	}
	for _, mm := range v.obj {
		if mm.key == "type" {
			continue
		}
		if !contains(implParams[group], mm.key) {
			if contains(otherParams[group], mm.key) {
				return nil, errUnsupported("mapping parameter [%s] on field [%s] of type [%s]", mm.key, path, typ)
			}
			if group == "object" {
				return nil, errMapperParsing("Mapping definition for [%s] has unsupported parameters:  [%s : %s]", name, mm.key, javaValue(mm.val))
			}
			return nil, errMapperParsing("unknown parameter [%s] on mapper [%s] of type [%s]", mm.key, name, typ)
		}
		if err := f.setParam(mm); err != nil {
			return nil, err
		}
	}
	if typ == "knn_vector" {
		if err := f.finishKNN(v); err != nil {
			return nil, err
		}
	}
	if typ == "date" && f.format == "" {
		f.format = defaultDateFormat
	}
	if f.searchAnalyzer != "" && f.analyzer == "" {
		// OpenSearch's TextParams.Analyzers: a search analyzer alone is refused.
		return nil, errMapperParsing("analyzer on field [%s] must be set when search_analyzer is set", name)
	}
	return f, nil
}

// searchAnalyzerName is the analyzer a match query on this text field uses unless the query
// names one: the search_analyzer, else the index analyzer.
func (f *field) searchAnalyzerName() string {
	if f.searchAnalyzer != "" {
		return f.searchAnalyzer
	}
	return f.analyzer
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func (f *field) setParam(mm member) *osError {
	v := mm.val
	boolParam := func(dst *bool) *osError {
		b, ok := v.boolean()
		if !ok {
			return errBoolValue(v)
		}
		*dst = b
		return nil
	}
	switch mm.key {
	case "properties":
		props, err := parseProperties(v, f.path+".")
		if err != nil {
			return err
		}
		f.props = props
		return nil
	case "dynamic":
		d, err := parseDynamic(v)
		if err != nil {
			return err
		}
		f.dynamic = d
	case "enabled":
		if err := boolParam(&f.enabled); err != nil {
			return err
		}
	case "fields":
		if v.k != kObject {
			return errMapperParsing("Expected map for property [fields] on field [%s] but got a %s", f.name, javaClass(v))
		}
		for _, sm := range v.obj {
			if sm.val.k != kObject {
				return errMapperParsing("Expected map for property [fields] on field [%s] but got a %s", sm.key, javaClass(sm.val))
			}
			sub, err := parseField(sm.key, f.path+"."+sm.key, sm.val)
			if err != nil {
				return err
			}
			if sub.typ == "object" || sub.typ == "knn_vector" {
				return errMapperParsing("Type [%s] cannot be used in multi field", sub.typ)
			}
			f.fields = append(f.fields, sub)
		}
		sortFields(f.fields)
		return nil
	case "analyzer", "search_analyzer":
		if v.k != kString {
			return errMapperParsing("[%s] must be a string", mm.key)
		}
		if !knownAnalyzer(v.s) {
			return errUnsupported("analyzer [%s] on field [%s] (only the standard and english analyzers are implemented)", v.s, f.path)
		}
		if mm.key == "analyzer" {
			f.analyzer = v.s
		} else {
			f.searchAnalyzer = v.s
		}
	case "index":
		if err := boolParam(&f.index); err != nil {
			return err
		}
	case "norms":
		if err := boolParam(&f.norms); err != nil {
			return err
		}
	case "store", "doc_values":
		var b bool
		if err := boolParam(&b); err != nil {
			return err
		}
	case "coerce":
		if err := boolParam(&f.coerce); err != nil {
			return err
		}
	case "ignore_malformed":
		if err := boolParam(&f.ignoreMalformed); err != nil {
			return err
		}
	case "ignore_above":
		n, ok := v.int()
		if !ok || n < 0 {
			return errMapperParsing("[ignore_above] must be positive, got [%s]", v.text())
		}
		f.ignoreAbove = int(n)
	case "null_value":
		if v.k != kNull {
			f.nullValue = v
		}
	case "meta":
		if v.k != kObject {
			return errMapperParsing("[meta] must be an object, got %s[%s] for field [%s]", javaClass(v), v.text(), f.name)
		}
	case "format":
		if v.k != kString {
			return errMapperParsing("[format] must be a string")
		}
		if !supportedDateFormat(v.s) {
			return errUnsupported("date format [%s] on field [%s]", v.s, f.path)
		}
		f.format = v.s
	case "dimension", "method", "space_type", "data_type", "mode", "compression_level":
		// read in finishKNN, which needs them together
	}
	f.params = append(f.params, kv{mm.key, v})
	return nil
}

func errBoolValue(v *jv) *osError {
	return errIllegalArgument("Failed to parse value [%s] as only [true] or [false] are allowed.", v.text())
}

func stringList(v *jv) ([]string, bool) {
	if v.k == kString {
		return []string{v.s}, true
	}
	if v.k != kArray {
		return nil, false
	}
	out := make([]string, 0, len(v.arr))
	for _, e := range v.arr {
		if e.k != kString {
			return nil, false
		}
		out = append(out, e.s)
	}
	return out, true
}

const defaultDateFormat = "strict_date_optional_time||epoch_millis"

func supportedDateFormat(f string) bool {
	for _, p := range strings.Split(f, "||") {
		switch p {
		case "strict_date_optional_time", "date_optional_time", "epoch_millis", "epoch_second", "strict_date", "date":
		default:
			return false
		}
	}
	return true
}

// itoa is strconv.Itoa for settings values.
func itoa(n int) string { return strconv.Itoa(n) }
