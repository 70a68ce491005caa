package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// This file is the one decoder of request bodies into typed inputs: a json.Decoder that refuses
// unknown fields, into a plain tagged struct the feature owns (a field's `want` tag words what it
// must be, as in "must be an object of header names to string values"), with every error of the
// body's shape turned into dotted domain.FieldErrors here. A request type with refusedKeys names
// top-level keys that are refused alone, each with its own message (a key's company). The feature validates the values
// (Validate) once the shape is right.
//
// Words and hooks, all read here:
//   - `want:"…"` words what a field's value must be ("must be " + want);
//   - `got:"paren"` puts the JSON type a wrong value has in parentheses ("must be one of a, b
//     (got a number)") and `got:"not"` after "not" ("must be a string, not a number") where the
//     default appends it (", got a number");
//   - `items:"first"` names only the first item of the wrong type in an array, at the array's
//     path ("must be an array of strings (file ids): item 3 is a number"); a null item is one;
//   - an input with UnknownField(object, key) words what a key it does not have should have
//     been ("unknown field; " + its words), asked once the rest of the body is decoded, so that
//     the words may depend on a value (a bulk request's operation); the object is the dotted
//     path of the object the key is of ("" for the body), apart, as a key may hold a dot;
//   - a field type with ShapeOf(value) is checked as the type it names for the value (a
//     string or an array; a block by its type), or taken as it is when it names none;
//   - an input with UnclippedKeys() names its unknown keys whole, as the search and
//     knowledge-base bodies always have (others clip them to 64 characters);
//   - an input with WrongValue(path, v) is told each value of the wrong type, to word its
//     error by what was sent ("must be an integer, not \"5\"");
//   - an input with TakeObjects(objects) is told the object of each unknown key TakeShape hands
//     it, in the same order;
//   - an input with TakeShape(unknown, wrong) reports the errors of its shape with those of its
//     values in its own order (its Validate): it is handed them in place of the 400, decoded
//     without the keys it does not have and with each value of the wrong type left out (null).

// decode reads the body as readObject does (JSON or YAML, one object, its text checked) into dst,
// a pointer to a struct.
func decode(w http.ResponseWriter, r *http.Request, limit int64, dst any) error {
	m, b, err := readObject(w, r, limit)
	if err != nil {
		return err
	}
	return decodeJSON(m, b, dst)
}

// firstError, embedded in a request type, keeps the form the API's first endpoints answered
// with: only the first value of the wrong type is named (keys in sorted order, paths without
// array indexes or map keys) and without the JSON type it has. Inputs without it name every
// such value, by its full path, with its JSON type ("must be a string, got a number").
type firstError struct{}

// namesFirstErrorOnly marks the request types that embed firstError.
func (firstError) namesFirstErrorOnly() {}

// decodeJSON decodes b (the JSON of m, a checked object) into dst. A key dst's type does not
// have is a 400 naming it (names match exactly, where encoding/json would take any case), as is
// a value of the wrong JSON type.
func decodeJSON(m map[string]any, b []byte, dst any) error {
	t := reflect.TypeOf(dst).Elem()
	_, legacy := dst.(interface{ namesFirstErrorOnly() })
	s := shapeCheck{legacy: legacy}
	if rk, ok := dst.(interface{ refusedKeys() map[string]string }); ok {
		var errs []domain.FieldError
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if msg, refused := rk.refusedKeys()[k]; refused {
				errs = append(errs, domain.FieldError{Field: k, Message: msg})
			}
		}
		if len(errs) > 0 {
			return domain.Invalid(errs)
		}
	}
	taker, takes := dst.(shapeTaker)
	s.take = takes
	_, s.whole = dst.(interface{ UnclippedKeys() })
	s.sent, _ = dst.(valueWorder)
	s.value(m, t, "", "", "")
	if s.legacy && len(s.unknown) > 0 {
		s.wrong = nil // named first, alone
	} else if s.legacy && len(s.wrong) > 1 {
		s.wrong = s.wrong[:1]
	}
	worder, words := dst.(unknownWorder)
	if !takes {
		if words {
			s.wordUnknown(worder)
		}
		if errs := append(s.unknown, s.wrong...); len(errs) > 0 {
			return domain.Invalid(errs)
		}
	} else if len(s.unknown)+len(s.wrong) > 0 {
		var err error
		if b, err = json.Marshal(m); err != nil { // m without what was wrong
			return domain.Errorf(domain.KindInvalid, "The request body could not be read")
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if takes {
		if words {
			s.wordUnknown(worder)
		}
		if o, ok := dst.(interface{ TakeObjects(objects []string) }); ok {
			o.TakeObjects(s.objects)
		}
		taker.TakeShape(s.unknown, s.wrong)
	}
	return nil
}

// shapeTaker is an input that reports the errors of its shape itself, with those of its values.
type shapeTaker interface {
	TakeShape(unknown, wrong []domain.FieldError)
}

// valueWorder is an input told each value of the wrong JSON type it was sent (null aside), to
// word its error by the value.
type valueWorder interface{ WrongValue(path string, v any) }

// unknownWorder is an input that words what an unknown key of an object (its dotted path, ""
// for the body) should have been: apart, so that a key with a dot is not taken for a path.
type unknownWorder interface {
	UnknownField(object, key string) string
}

// wordUnknown words the unknown keys as the input says ("" keeps the decoder's words).
func (s *shapeCheck) wordUnknown(w unknownWorder) {
	for i, e := range s.unknown {
		key := e.Field
		if s.objects[i] != "" {
			key = key[len(s.objects[i])+1:]
		}
		if what := w.UnknownField(s.objects[i], key); what != "" {
			s.unknown[i].Message = "unknown field; " + what
		}
	}
}

// decodeError turns what the json.Decoder refused into a client error; the shape check has
// found these before it in every case it knows.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	var de *domain.Error
	switch {
	case errors.As(err, &te) && te.Field != "":
		return domain.Invalid([]domain.FieldError{{Field: te.Field, Message: "must be " + kindName(te.Type)}})
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no typed error for it, nor the path of the object.
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return domain.Invalid([]domain.FieldError{{Field: domain.Clip(name, 64), Message: "unknown field"}})
	case errors.As(err, &de):
		return de
	}
	return domain.Errorf(domain.KindInvalid, "The request body has a field of the wrong type")
}

// shapeCheck walks a decoded body beside the type it will be decoded into, collecting unknown
// keys and values of the wrong JSON type.
type shapeCheck struct {
	legacy  bool
	take    bool // for a shapeTaker: leave out what is wrong, to decode the rest
	whole   bool // name unknown keys unclipped (UnclippedKeys)
	sent    valueWorder
	unknown []domain.FieldError
	objects []string // the object of each unknown key: its dotted path, "" for the body
	wrong   []domain.FieldError
}

// valueTyper is a field type that decodes a T of its own (domain.Optional).
type valueTyper interface{ ValueType() reflect.Type }

// shapeChooser is a field type whose JSON has one of several shapes (an execute body's content
// is a string or an array of blocks; a block's fields are those of its type): ShapeOf names the
// type a value is checked as, or nil when the type itself takes the value as it is.
type shapeChooser interface{ ShapeOf(v any) reflect.Type }

var (
	valueTyperType  = reflect.TypeFor[valueTyper]()
	chooserType     = reflect.TypeFor[shapeChooser]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	numberType      = reflect.TypeFor[json.Number]()
)

// value checks v (null is always accepted: encoding/json leaves the zero value) against t at
// path; want words what the value must be when the field's tag says, in the style of its tags
// (got, items). It reports whether v is of the right JSON type (items of the wrong type aside).
func (s *shapeCheck) value(v any, t reflect.Type, path, want string, tag reflect.StructTag) bool {
	if v == nil {
		return true
	}
	for {
		switch {
		case t.Implements(valueTyperType):
			t = reflect.Zero(t).Interface().(valueTyper).ValueType()
			continue
		case t.Implements(chooserType):
			if t = reflect.Zero(t).Interface().(shapeChooser).ShapeOf(v); t == nil {
				return true
			}
			continue
		case t.Kind() == reflect.Pointer:
			t = t.Elem()
			continue
		}
		break
	}
	if t.Kind() == reflect.Interface || (t != numberType && reflect.PointerTo(t).Implements(unmarshalerType)) {
		return true // any value, or a type that reads itself
	}
	got := domain.JSONType(v)
	ok := false
	switch t.Kind() {
	case reflect.String:
		if t == numberType {
			_, ok = v.(json.Number)
		} else {
			_, ok = v.(string)
		}
	case reflect.Bool:
		_, ok = v.(bool)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n, isNum := v.(json.Number); isNum {
			_, err := strconv.ParseInt(string(n), 10, t.Bits())
			ok = err == nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n, isNum := v.(json.Number); isNum {
			_, err := strconv.ParseUint(string(n), 10, t.Bits())
			ok = err == nil
		}
	case reflect.Float32, reflect.Float64:
		if n, isNum := v.(json.Number); isNum {
			_, err := strconv.ParseFloat(string(n), t.Bits())
			ok = err == nil
		}
	case reflect.Slice, reflect.Array:
		var list []any
		if list, ok = v.([]any); ok {
			s.items(list, t.Elem(), path, want, tag)
		}
	case reflect.Map:
		var m map[string]any
		if m, ok = v.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if !s.value(m[k], t.Elem(), s.member(path, domain.Clip(k, 128)), "", "") && s.take {
					m[k] = nil
				}
			}
		}
	case reflect.Struct:
		var m map[string]any
		if m, ok = v.(map[string]any); ok {
			s.object(m, t, path)
		}
	}
	if !ok {
		s.wrong = append(s.wrong, domain.FieldError{Field: path, Message: s.typeMessage(t, want, got, tag)})
		if s.sent != nil {
			s.sent.WrongValue(path, v)
		}
	}
	return ok
}

// items checks the items of an array against their type t; `items:"first"` names only the
// first of the wrong type (null too: such a list never held nulls), at the array's path.
func (s *shapeCheck) items(list []any, t reflect.Type, path, want string, tag reflect.StructTag) {
	if tag.Get("items") != "first" {
		for i, x := range list {
			if !s.value(x, t, s.member(path, strconv.Itoa(i)), "", "") && s.take {
				list[i] = nil
			}
		}
		return
	}
	named := false
	for i, x := range list {
		item := shapeCheck{take: s.take}
		if x != nil && item.value(x, t, "", "", "") {
			continue
		}
		if s.take {
			list[i] = nil
		}
		if !named {
			named = true
			if want == "" {
				want = "an array"
			}
			s.wrong = append(s.wrong, domain.FieldError{Field: path,
				Message: "must be " + want + ": item " + strconv.Itoa(i) + " is " + domain.JSONType(x)})
		}
	}
}

// object checks the keys of m against the fields of struct type t, then each field's value.
func (s *shapeCheck) object(m map[string]any, t reflect.Type, path string) {
	fields := structFields(t)
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	var whole []string // the unknown keys unclipped, in unknownFields' order
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if s.whole && !slices.Contains(names, k) {
			whole = append(whole, k)
		}
	}
	for i, e := range unknownFields(m, names) {
		if s.whole {
			e.Field = whole[i]
		}
		s.unknown = append(s.unknown, domain.FieldError{Field: joinPath(path, e.Field), Message: e.Message})
		s.objects = append(s.objects, path)
	}
	if s.take {
		for k := range m {
			if !slices.Contains(names, k) {
				delete(m, k)
			}
		}
	}
	if s.legacy {
		// encoding/json's first error, of the keys in sorted order (as decodeInto had them).
		slices.SortFunc(fields, func(a, b jsonField) int { return strings.Compare(a.name, b.name) })
	}
	for _, f := range fields {
		if v, ok := m[f.name]; ok {
			if !s.value(v, f.typ, joinPath(path, f.name), f.want, f.tag) && s.take {
				m[f.name] = nil
			}
		}
	}
}

// member is the path of an array item or map value: encoding/json's form names only the field.
func (s *shapeCheck) member(path, key string) string {
	if s.legacy {
		return path
	}
	return joinPath(path, key)
}

// typeMessage words a value of JSON type got where t was wanted: "must be a string, got a
// number" (or "(got a number)" with `got:"paren"`, ", not a number" with `got:"not"`). A
// number that does not fit (a fraction for an integer) says only what it must be.
func (s *shapeCheck) typeMessage(t reflect.Type, want, got string, tag reflect.StructTag) string {
	if want == "" {
		want = kindName(t)
	}
	msg := "must be " + want
	switch {
	case s.legacy || got == jsonKind(t):
	case tag.Get("got") == "paren":
		msg += " (got " + got + ")"
	case tag.Get("got") == "not":
		msg += ", not " + got
	default:
		msg += ", got " + got
	}
	return msg
}

// jsonKind is the JSON type a value of t is written as, in domain.JSONType's words.
func jsonKind(t reflect.Type) string {
	switch kindName(t) {
	case "an integer", "a number":
		return "a number"
	case "a value of another type":
		return ""
	}
	return kindName(t)
}

// jsonField is a struct field as encoding/json sees it: its JSON name, its type and the `want`
// tag that words what its value must be.
type jsonField struct {
	name, want string
	typ        reflect.Type
	tag        reflect.StructTag
}

// structFields lists the JSON fields of a struct type in field order.
func structFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, want: f.Tag.Get("want"), typ: f.Type, tag: f.Tag})
	}
	return out
}
