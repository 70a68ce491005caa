package telemetry

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the OTLP messages a trace export writes (opentelemetry-proto:
// trace/v1/trace.proto, common/v1/common.proto, resource/v1/resource.proto).
// TestEncodeIsOTLP decodes what Encode writes with the official generated types.
const (
	fTracesResourceSpans = 1 // TracesData

	fResourceSpansResource  = 1 // ResourceSpans
	fResourceSpansScope     = 2
	fResourceSpansSchemaURL = 3

	fResourceAttributes = 1 // Resource

	fScopeSpansScope     = 1 // ScopeSpans
	fScopeSpansSpans     = 2
	fScopeSpansSchemaURL = 3

	fScopeName    = 1 // InstrumentationScope
	fScopeVersion = 2

	fSpanTraceID           = 1 // Span
	fSpanSpanID            = 2
	fSpanTraceState        = 3
	fSpanParentSpanID      = 4
	fSpanName              = 5
	fSpanKind              = 6
	fSpanStart             = 7
	fSpanEnd               = 8
	fSpanAttributes        = 9
	fSpanDroppedAttributes = 10
	fSpanEvents            = 11
	fSpanDroppedEvents     = 12
	fSpanLinks             = 13
	fSpanDroppedLinks      = 14
	fSpanStatus            = 15
	fSpanFlags             = 16

	fEventTime              = 1 // Span.Event
	fEventName              = 2
	fEventAttributes        = 3
	fEventDroppedAttributes = 4

	fLinkTraceID           = 1 // Span.Link
	fLinkSpanID            = 2
	fLinkTraceState        = 3
	fLinkAttributes        = 4
	fLinkDroppedAttributes = 5
	fLinkFlags             = 6

	fStatusMessage = 2 // Status
	fStatusCode    = 3

	fKeyValueKey   = 1 // KeyValue
	fKeyValueValue = 2

	fAnyString = 1 // AnyValue
	fAnyBool   = 2
	fAnyInt    = 3
	fAnyDouble = 4
	fAnyArray  = 5

	fArrayValues = 1 // ArrayValue
)

// Span flags and status codes of OTLP.
const (
	flagHasIsRemote = 0x100 // SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
	flagIsRemote    = 0x200 // SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
	statusOK        = 1
	statusError     = 2
)

// Encode is spans as an OTLP TracesData message, in binary protobuf: one ResourceSpans per
// resource, one ScopeSpans per instrumentation scope within it, spans in the order they came.
// TracesData is wire-identical to ExportTraceServiceRequest, the body OTLP/HTTP takes.
func Encode(spans []sdktrace.ReadOnlySpan) []byte {
	type scoped struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type group struct {
		res    *resource.Resource
		scopes []*scoped
	}
	var groups []*group
	byRes := map[attribute.Distinct]*group{}
	for _, s := range spans {
		var key attribute.Distinct
		if r := s.Resource(); r != nil {
			key = r.Equivalent()
		}
		g, ok := byRes[key]
		if !ok {
			g = &group{res: s.Resource()}
			byRes[key] = g
			groups = append(groups, g)
		}
		is := s.InstrumentationScope()
		var sc *scoped
		for _, x := range g.scopes {
			if x.scope.Name == is.Name && x.scope.Version == is.Version && x.scope.SchemaURL == is.SchemaURL {
				sc = x
			}
		}
		if sc == nil {
			sc = &scoped{scope: is}
			g.scopes = append(g.scopes, sc)
		}
		sc.spans = append(sc.spans, s)
	}
	var out []byte
	for _, g := range groups {
		out = message(out, fTracesResourceSpans, func(b []byte) []byte {
			b = message(b, fResourceSpansResource, func(b []byte) []byte {
				if g.res != nil {
					b = keyValues(b, fResourceAttributes, g.res.Attributes())
				}
				return b
			})
			for _, sc := range g.scopes {
				b = message(b, fResourceSpansScope, func(b []byte) []byte {
					b = message(b, fScopeSpansScope, func(b []byte) []byte {
						b = str(b, fScopeName, sc.scope.Name)
						return str(b, fScopeVersion, sc.scope.Version)
					})
					for _, s := range sc.spans {
						b = message(b, fScopeSpansSpans, func(b []byte) []byte { return span(b, s) })
					}
					return str(b, fScopeSpansSchemaURL, sc.scope.SchemaURL)
				})
			}
			if g.res != nil {
				b = str(b, fResourceSpansSchemaURL, g.res.SchemaURL())
			}
			return b
		})
	}
	return out
}

func span(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = bytesField(b, fSpanTraceID, tid[:])
	b = bytesField(b, fSpanSpanID, sid[:])
	b = str(b, fSpanTraceState, sc.TraceState().String())
	flags := uint32(sc.TraceFlags()) | flagHasIsRemote
	if parent := s.Parent(); parent.IsValid() {
		psid := parent.SpanID()
		b = bytesField(b, fSpanParentSpanID, psid[:])
		if parent.IsRemote() {
			flags |= flagIsRemote
		}
	}
	b = str(b, fSpanName, s.Name())
	b = varint(b, fSpanKind, uint64(s.SpanKind())) // the API's kinds are OTLP's numbers
	b = fixed64(b, fSpanStart, uint64(s.StartTime().UnixNano()))
	b = fixed64(b, fSpanEnd, uint64(s.EndTime().UnixNano()))
	b = keyValues(b, fSpanAttributes, s.Attributes())
	b = varint(b, fSpanDroppedAttributes, uint64(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		b = message(b, fSpanEvents, func(b []byte) []byte {
			b = fixed64(b, fEventTime, uint64(ev.Time.UnixNano()))
			b = str(b, fEventName, ev.Name)
			b = keyValues(b, fEventAttributes, ev.Attributes)
			return varint(b, fEventDroppedAttributes, uint64(ev.DroppedAttributeCount))
		})
	}
	b = varint(b, fSpanDroppedEvents, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		b = message(b, fSpanLinks, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = bytesField(b, fLinkTraceID, ltid[:])
			b = bytesField(b, fLinkSpanID, lsid[:])
			b = str(b, fLinkTraceState, l.SpanContext.TraceState().String())
			b = keyValues(b, fLinkAttributes, l.Attributes)
			b = varint(b, fLinkDroppedAttributes, uint64(l.DroppedAttributeCount))
			return fixed32(b, fLinkFlags, uint32(l.SpanContext.TraceFlags())|flagHasIsRemote)
		})
	}
	b = varint(b, fSpanDroppedLinks, uint64(s.DroppedLinks()))
	switch st := s.Status(); st.Code {
	case codes.Error:
		b = message(b, fSpanStatus, func(b []byte) []byte {
			b = str(b, fStatusMessage, st.Description)
			return varint(b, fStatusCode, statusError)
		})
	case codes.Ok:
		b = message(b, fSpanStatus, func(b []byte) []byte { return varint(b, fStatusCode, statusOK) })
	}
	return fixed32(b, fSpanFlags, flags)
}

func keyValues(b []byte, field protowire.Number, attrs []attribute.KeyValue) []byte {
	for _, kv := range attrs {
		b = message(b, field, func(b []byte) []byte {
			b = str(b, fKeyValueKey, string(kv.Key))
			return message(b, fKeyValueValue, func(b []byte) []byte { return anyValue(b, kv.Value) })
		})
	}
	return b
}

// anyValue writes an AnyValue's fields; unlike the other fields, a zero value is written, as
// the oneof says which it is.
func anyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		b = protowire.AppendTag(b, fAnyBool, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, fAnyInt, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = protowire.AppendTag(b, fAnyDouble, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.BOOLSLICE:
		return array(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return array(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return array(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return array(b, v.AsStringSlice(), attribute.StringValue)
	}
	b = protowire.AppendTag(b, fAnyString, protowire.BytesType)
	return protowire.AppendString(b, v.String())
}

func array[T any](b []byte, vs []T, conv func(T) attribute.Value) []byte {
	return message(b, fAnyArray, func(b []byte) []byte {
		for _, v := range vs {
			b = message(b, fArrayValues, func(b []byte) []byte { return anyValue(b, conv(v)) })
		}
		return b
	})
}

// message writes an embedded message field whose body fill appends (always written: an empty
// message still says the field is set).
func message(b []byte, field protowire.Number, fill func([]byte) []byte) []byte {
	body := fill(nil)
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, body)
}

// The scalar writers leave out a field with its zero value, as proto3 does (nonZero).

func str(b []byte, field protowire.Number, s string) []byte {
	return nonZero(b, field, protowire.BytesType, s, protowire.AppendString)
}

func bytesField(b []byte, field protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func varint(b []byte, field protowire.Number, v uint64) []byte {
	return nonZero(b, field, protowire.VarintType, v, protowire.AppendVarint)
}

func fixed64(b []byte, field protowire.Number, v uint64) []byte {
	return nonZero(b, field, protowire.Fixed64Type, v, protowire.AppendFixed64)
}

func fixed32(b []byte, field protowire.Number, v uint32) []byte {
	return nonZero(b, field, protowire.Fixed32Type, v, protowire.AppendFixed32)
}

// nonZero writes field, of wire type typ, with v appended by app, unless v is its zero value.
func nonZero[T comparable](b []byte, field protowire.Number, typ protowire.Type, v T, app func([]byte, T) []byte) []byte {
	var zero T
	if v == zero {
		return b
	}
	return app(protowire.AppendTag(b, field, typ), v)
}
