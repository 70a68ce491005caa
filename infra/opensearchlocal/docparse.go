package opensearchlocal

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// fieldData is what one document indexes for one field path.
type fieldData struct {
	tf     map[string]int // analyzed terms and their frequencies (text)
	length int            // number of tokens (text), for BM25 length norms
	terms  []string       // exact terms (keyword, boolean "T"/"F")
	nums   []float64      // numeric values (numbers, dates as epoch millis)
	vec    []float32      // knn_vector
}

// docParser turns a source into indexed field data against a mapping, adding dynamic fields to
// a private copy of the mapping (DocumentParser + dynamic mapping).
type docParser struct {
	m      *mapping
	root   *field // the mapping root being extended; a clone once anything is added
	cloned bool
	id     string
	fields map[string]*fieldData
	spans  []vecSpan // where the vectors lie in the source, in document order
}

// parsedDoc is what parsing a source gives: the indexed field data, the mapping root when the
// document introduced new fields (else nil), the source as a value and its vector spans.
type parsedDoc struct {
	fields map[string]*fieldData
	root   *field
	val    *jv
	spans  []vecSpan
}

var metadataFields = map[string]bool{"_id": true, "_index": true, "_source": true, "_routing": true, "_field_names": true,
	"_ignored": true, "_seq_no": true, "_primary_term": true, "_version": true, "_type": true, "_data_stream_timestamp": true}

// parseSource parses and indexes a document. It returns the field data and, when the document
// introduced new fields, the new mapping root.
func parseSource(m *mapping, id string, src []byte) (*parsedDoc, *osError) {
	if len(bytes.TrimSpace(src)) == 0 {
		return nil, errMapperParsing("failed to parse, document is empty")
	}
	v, err := parseJSON(src)
	if err != nil {
		return nil, errMapperParsing("failed to parse").withCause(errJSON(src, err))
	}
	if v.k != kObject {
		return nil, errMapperParsing("failed to parse").withCause(errMapperParsing("Malformed content, must start with an object"))
	}
	p := &docParser{m: m, root: m.root, id: id, fields: map[string]*fieldData{}}
	if e := p.object(p.root, v, "", "true"); e != nil {
		return nil, e
	}
	out := &parsedDoc{fields: p.fields, val: v, spans: p.spans}
	if p.cloned {
		out.root = p.root
	}
	return out, nil
}

func (p *docParser) data(path string) *fieldData {
	d := p.fields[path]
	if d == nil {
		d = &fieldData{}
		p.fields[path] = d
	}
	return d
}

// ensureClone makes the mapping tree private before a dynamic addition; it returns the object
// field at the same position in the clone.
func (p *docParser) ensureClone(obj *field) *field {
	if !p.cloned {
		p.root = p.root.clone()
		p.cloned = true
	}
	return p.current(obj)
}

// current maps an object field to its counterpart in the (possibly cloned) mapping tree.
func (p *docParser) current(obj *field) *field {
	if !p.cloned {
		return obj
	}
	if obj.path == "" {
		return p.root
	}
	return findObject(p.root, obj.path)
}

func findObject(root *field, path string) *field {
	cur := root
	for _, part := range strings.Split(path, ".") {
		var next *field
		for _, f := range cur.props {
			if f.name == part {
				next = f
			}
		}
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

func (p *docParser) object(of *field, v *jv, prefix, inherited string) *osError {
	dyn := of.dynamic
	if dyn == "" {
		dyn = inherited
	}
	for _, mm := range v.obj {
		key := mm.key
		if prefix == "" && metadataFields[key] {
			return errMapperParsing("Field [%s] is a metadata field and cannot be added inside a document. Use the index API request parameters.", key)
		}
		if strings.TrimSpace(key) == "" {
			return errMapperParsing("failed to parse").withCause(errIllegalArgument("field name cannot be an empty string"))
		}
		// "a.b": keys with dots address sub-objects.
		if i := strings.IndexByte(key, '.'); i > 0 && i < len(key)-1 {
			head, rest := key[:i], key[i+1:]
			child, e := p.child(of, head, prefix, dyn, &jv{k: kObject, src: v.src})
			if e != nil {
				return e
			}
			if child == nil {
				continue
			}
			if child.typ != "object" {
				return errMapperParsing("Could not dynamically add mapping for field [%s]. Existing mapping for [%s] must be of type object but found [%s].", prefix+key, prefix+head, child.typ)
			}
			sub := &jv{k: kObject, src: v.src, obj: []member{{key: rest, keyOff: mm.keyOff, val: mm.val}}}
			if e := p.object(child, sub, prefix+head+".", dyn); e != nil {
				return e
			}
			continue
		}
		child, e := p.child(of, key, prefix, dyn, mm.val)
		if e != nil {
			return e
		}
		if child == nil {
			continue
		}
		if e := p.value(child, mm.val, dyn); e != nil {
			return e
		}
	}
	return nil
}

// child finds or dynamically maps the field key under of; nil means "not indexed".
func (p *docParser) child(of *field, key, prefix, dyn string, val *jv) (*field, *osError) {
	of = p.current(of)
	for _, f := range of.props {
		if f.name == key {
			return f, nil
		}
	}
	switch dyn {
	case "strict":
		within := strings.TrimSuffix(prefix, ".")
		if within == "" {
			within = "_doc"
		}
		return nil, &osError{typ: "strict_dynamic_mapping_exception", reason: fmt.Sprintf("mapping set to strict, dynamic introduction of [%s] within [%s] is not allowed", key, within)}
	case "false":
		return nil, nil
	}
	f := p.dynamicField(key, prefix+key, val)
	if f == nil {
		return nil, nil
	}
	of = p.ensureClone(of)
	of.props = append(of.props, f)
	sortFields(of.props)
	return f, nil
}

// dynamicField maps a new field from its first value, as OpenSearch's dynamic mapping does.
func (p *docParser) dynamicField(name, path string, v *jv) *field {
	for v.k == kArray {
		var first *jv
		for _, e := range v.arr {
			if e.k != kNull {
				first = e
				break
			}
		}
		if first == nil {
			return nil
		}
		v = first
	}
	f := &field{name: name, path: path, index: true, coerce: true, enabled: true}
	switch v.k {
	case kNull:
		return nil
	case kObject:
		f.typ = "object"
	case kBool:
		f.typ = "boolean"
	case kNumber:
		if v.isInt() {
			f.typ = "long"
		} else {
			f.typ = "float"
		}
	case kString:
		if p.m.dateDetection {
			if _, ok := parseDate(v.s, "strict_date_optional_time"); ok {
				f.typ = "date"
				f.format = defaultDateFormat
				return f
			}
		}
		f.typ = "text"
		f.norms = true
		kw := &field{name: "keyword", path: path + ".keyword", typ: "keyword", index: true, ignoreAbove: 256,
			params: obj{{"ignore_above", 256}}}
		f.fields = []*field{kw}
	}
	return f
}

func (p *docParser) value(f *field, v *jv, dyn string) *osError {
	if f.typ == "object" {
		switch v.k {
		case kNull:
			return nil
		case kObject:
			if !f.enabled {
				return nil
			}
			return p.object(f, v, f.path+".", dyn)
		case kArray:
			for _, e := range v.arr {
				if e := p.value(f, e, dyn); e != nil {
					return e
				}
			}
			return nil
		}
		return errMapperParsing("object mapping for [%s] tried to parse field [%s] as object, but found a concrete value", f.path, f.name)
	}
	if f.typ == "knn_vector" {
		return p.vector(f, v)
	}
	if v.k == kArray {
		for _, e := range v.arr {
			if e := p.value(f, e, dyn); e != nil {
				return e
			}
		}
		return nil
	}
	if v.k == kObject {
		return p.fieldErr(f, v, errIllegalArgument("Can't get text on a START_OBJECT at %s", strings.Trim(v.pos(), "[]")))
	}
	if v.k == kNull {
		if f.nullValue == nil {
			return nil
		}
		v = f.nullValue
	}
	if e := p.leaf(f, v); e != nil {
		if f.ignoreMalformed {
			return nil
		}
		return e
	}
	for _, sub := range f.fields {
		if e := p.leaf(sub, v); e != nil {
			return e
		}
	}
	return nil
}

func (p *docParser) fieldErr(f *field, v *jv, cause *osError) *osError {
	return errMapperParsing("failed to parse field [%s] of type [%s] in document with id '%s'. Preview of field's value: '%s'",
		f.path, f.typ, p.id, v.preview()).withCause(cause)
}

func (p *docParser) leaf(f *field, v *jv) *osError {
	switch f.typ {
	case "text":
		if !f.index {
			return nil
		}
		d := p.data(f.path)
		if d.tf == nil {
			d.tf = map[string]int{}
		}
		toks := analyzeWith(f.analyzer, v.text())
		for _, t := range toks {
			d.tf[t]++
		}
		d.length += len(toks)
	case "keyword":
		s := v.text()
		if f.ignoreAbove > 0 && utf8.RuneCountInString(s) > f.ignoreAbove {
			return nil
		}
		if f.index {
			d := p.data(f.path)
			d.terms = append(d.terms, s)
		}
	case "boolean":
		var b bool
		switch {
		case v.k == kBool:
			b = v.b
		case v.k == kString && (v.s == "true" || v.s == "false" || v.s == ""):
			b = v.s == "true"
		default:
			return p.fieldErr(f, v, errIllegalArgument("Failed to parse value [%s] as only [true] or [false] are allowed.", v.text()))
		}
		if f.index {
			d := p.data(f.path)
			d.terms = append(d.terms, boolTerm(b))
		}
	case "date":
		ms, ok := dateValue(v, f.format)
		if !ok {
			return p.fieldErr(f, v, errIllegalArgument("failed to parse date field [%s] with format [%s]", v.text(), f.format))
		}
		if f.index {
			d := p.data(f.path)
			d.nums = append(d.nums, float64(ms))
		}
	default: // numeric
		n, cause := numericValue(f, v)
		if cause != nil {
			return p.fieldErr(f, v, cause)
		}
		if f.index {
			d := p.data(f.path)
			d.nums = append(d.nums, n)
		}
	}
	return nil
}

func boolTerm(b bool) string {
	if b {
		return "T"
	}
	return "F"
}

var intRanges = map[string][2]float64{
	"byte": {math.MinInt8, math.MaxInt8}, "short": {math.MinInt16, math.MaxInt16},
	"integer": {math.MinInt32, math.MaxInt32}, "long": {math.MinInt64, math.MaxInt64},
}

// numericValue parses a value for a numeric field (NumberFieldMapper's rules: numeric strings
// are coerced unless coerce is false; integer types truncate fractions when coercing).
func numericValue(f *field, v *jv) (float64, *osError) {
	var x float64
	switch v.k {
	case kNumber:
		var err error
		x, err = strconv.ParseFloat(v.s, 64)
		if err != nil && !isRangeErr(err) {
			return 0, &osError{typ: "number_format_exception", reason: fmt.Sprintf("For input string: %q", v.s), plain: true}
		}
	case kString:
		if !f.coerce {
			return 0, errIllegalArgument("Value [%s] is not a number and coerce is false", v.s)
		}
		var err error
		x, err = strconv.ParseFloat(strings.TrimSpace(v.s), 64)
		if err != nil {
			return 0, &osError{typ: "number_format_exception", reason: fmt.Sprintf("For input string: %q", v.s), plain: true}
		}
	default:
		return 0, errIllegalArgument("Current token (%s) not numeric, can not use numeric value accessors", v.tokenName())
	}
	if r, ok := intRanges[f.typ]; ok {
		if x < r[0] || x > r[1] {
			return 0, errIllegalArgument("Value [%s] is out of range for %s %s", v.text(), article(f.typ), rangeName(f.typ))
		}
		if x != math.Trunc(x) {
			if !f.coerce {
				return 0, errIllegalArgument("Value [%s] has a decimal part", v.text())
			}
			x = math.Trunc(x)
		}
		return x, nil
	}
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, errIllegalArgument("[%s] supports only finite values, but got [%s]", f.typ, v.text())
	}
	if f.typ == "float" || f.typ == "half_float" {
		x = float64(float32(x))
	}
	return x, nil
}

func article(typ string) string {
	if typ == "integer" {
		return "an"
	}
	return "a"
}

func rangeName(typ string) string { return typ }

// vector parses a knn_vector value (KNNVectorFieldMapper.parseCreateField).
func (p *docParser) vector(f *field, v *jv) *osError {
	if v.k == kNull {
		return nil
	}
	var vals []*jv
	switch v.k {
	case kArray:
		vals = v.arr
	case kNumber:
		vals = []*jv{v}
	default:
		return p.fieldErr(f, v, errIllegalArgument("Vector values must be an array of numbers"))
	}
	vec := make([]float32, 0, len(vals))
	for _, e := range vals {
		if e.k != kNumber {
			return p.fieldErr(f, &jv{k: kNull}, errIllegalArgument("[%s] field values must be numbers, found [%s]", "knn_vector", e.text()))
		}
		x, _ := strconv.ParseFloat(e.s, 64)
		fx := float32(x)
		if math.IsInf(float64(fx), 0) {
			return p.fieldErr(f, &jv{k: kNull}, errIllegalArgument("KNN vector values cannot be infinity"))
		}
		vec = append(vec, fx)
	}
	if len(vec) != f.knn.dimension {
		return p.fieldErr(f, &jv{k: kNull}, errIllegalArgument("Vector dimension mismatch. Expected: %d, Given: %d", f.knn.dimension, len(vec)))
	}
	if f.knn.space == spaceCosine && isZero(vec) {
		return p.fieldErr(f, &jv{k: kNull}, errIllegalArgument("zero vector is not supported when space type is [%s]", spaceCosine))
	}
	d := p.data(f.path)
	if d.vec != nil {
		return p.fieldErr(f, &jv{k: kNull}, errIllegalArgument("Vector field [%s] cannot have more than one value", f.path))
	}
	d.vec = vec
	if v.k == kArray {
		if end := bytes.IndexByte(v.src[v.off:], ']'); end >= 0 {
			// Only numbers are inside, so the first ']' closes the array.
			p.spans = append(p.spans, vecSpan{start: v.off, end: v.off + end + 1, vec: vec})
		}
	}
	return nil
}

// dateValue reads a date as epoch millis with the field's formats.
func dateValue(v *jv, format string) (int64, bool) {
	for _, f := range strings.Split(format, "||") {
		switch f {
		case "epoch_millis", "epoch_second":
			var n float64
			var ok bool
			switch v.k {
			case kNumber:
				n, ok = v.float()
			case kString:
				x, err := strconv.ParseFloat(v.s, 64)
				n, ok = x, err == nil
			}
			if ok {
				if f == "epoch_second" {
					n *= 1000
				}
				return int64(n), true
			}
		default:
			if v.k == kString {
				if ms, ok := parseDate(v.s, f); ok {
					return ms, true
				}
			}
		}
	}
	return 0, false
}

var dateLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999", "2006-01-02T15:04Z07:00",
	"2006-01-02T15:04", "2006-01-02T15Z07:00", "2006-01-02T15", "2006-01-02", "2006-01", "2006",
}

// parseDate reads OpenSearch's strict_date_optional_time family (a date, optionally a time,
// optionally a zone; UTC when none).
func parseDate(s, format string) (int64, bool) {
	if format == "strict_date" || format == "date" {
		t, err := time.Parse("2006-01-02", s)
		return t.UnixMilli(), err == nil
	}
	if len(s) < 4 || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			if l == "2006" && format == "strict_date_optional_time" {
				// a bare number is only a date when it has the date's dashes
				return 0, false
			}
			return t.UnixMilli(), true
		}
	}
	return 0, false
}
