package domain

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// Optional is a field of a change (PATCH) that tells a field left out (Set false) from one sent
// as null (Null) and from a value (Value), which a pointer cannot.
type Optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// Some is an Optional that holds v, for inputs built in Go.
func Some[T any](v T) Optional[T] { return Optional[T]{Set: true, Value: v} }

// UnmarshalJSON records that the field was sent, and whether as null.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	*o = Optional[T]{Set: true}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// ValueType is T, for the decoder that checks a body's shape before decoding it.
func (Optional[T]) ValueType() reflect.Type { return reflect.TypeFor[T]() }
