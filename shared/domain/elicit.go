package domain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
)

// An MCP server may ask the person behind a run for input in the middle of a tool call
// (elicitation/create, form mode, MCP 2025-11-25). The run pauses (PendingElicitation) with the
// question; the person's answer continues it, and the call is made again with the answer ready
// for the same question.

// PendingElicitation is a PendingAction whose MCP calls wait for a person's answer to their
// server's question: the client sends elicitations.
const PendingElicitation = "elicitation"

// The actions of an answer to an elicitation, as the MCP specification names them.
const (
	ElicitAccept  = "accept"  // the person submitted the form
	ElicitDecline = "decline" // the person explicitly refused
	ElicitCancel  = "cancel"  // the person dismissed it without choosing
)

// MaxElicitSchemaBytes bounds the requested schema of an elicitation a run pauses for (it is
// kept with the paused execution); a larger one is declined.
const MaxElicitSchemaBytes = 16 << 10

// Elicitation is what an MCP server asks a person during a tool call.
type Elicitation struct {
	Message string
	// Schema is the requested schema: an object of flat properties (string, number, integer,
	// boolean, enums, arrays of enum strings), each maybe with a default.
	Schema map[string]any
}

// Key identifies the question, the same when a call made again asks it again.
func (e Elicitation) Key() string {
	b, _ := json.Marshal(struct {
		M string         `json:"m"`
		S map[string]any `json:"s"`
	}{e.Message, e.Schema}) // map keys sorted: the same schema, the same bytes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// ElicitAnswer is a person's answer to an elicitation.
type ElicitAnswer struct {
	Action  string
	Content map[string]any // accept only: the form's values
}

// Elicitor answers the elicitations of one tool call; the call's context carries it
// (WithElicitor) to the MCP connector.
type Elicitor interface {
	Elicit(ctx context.Context, e Elicitation) ElicitAnswer
}

type elicitorKey struct{}

// WithElicitor returns ctx carrying e for the tool call made under it.
func WithElicitor(ctx context.Context, e Elicitor) context.Context {
	return context.WithValue(ctx, elicitorKey{}, e)
}

// ElicitorFrom returns the elicitor ctx carries, or nil (the call declines every question).
func ElicitorFrom(ctx context.Context) Elicitor {
	e, _ := ctx.Value(elicitorKey{}).(Elicitor)
	return e
}

// ElicitDefaults returns content with the default of every property of schema that content
// lacks (the MCP specification, 2025-11-25: a client applies the schema's defaults to the
// accepted content). content is not modified; nil content is an empty form.
func ElicitDefaults(schema, content map[string]any) map[string]any {
	out := make(map[string]any, len(content))
	for k, v := range content {
		out[k] = v
	}
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		ps, _ := p.(map[string]any)
		if d, ok := ps["default"]; ok {
			if _, set := out[name]; !set {
				out[name] = d
			}
		}
	}
	return out
}

// CheckElicitContent checks accepted content (its defaults applied) against the requested
// schema: every required property present, no property the schema lacks, each value of its
// property's type and within its enum. Fields are named under at ("elicitations.0.content").
func CheckElicitContent(at string, schema, content map[string]any) []FieldError {
	var errs []FieldError
	add := func(f, m string) { errs = append(errs, FieldError{Field: f, Message: m}) }
	props, _ := schema["properties"].(map[string]any)
	names := make([]string, 0, len(content))
	for k := range content {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		p, ok := props[name]
		if !ok {
			add(at+"."+name, "is not a field of the requested form")
			continue
		}
		ps, _ := p.(map[string]any)
		if msg := elicitValue(ps, content[name]); msg != "" {
			add(at+"."+name, msg)
		}
	}
	req, _ := schema["required"].([]any)
	for _, r := range req {
		name, _ := r.(string)
		if _, ok := content[name]; name != "" && !ok {
			add(at+"."+name, "is required by the requested form")
		}
	}
	return errs
}

// elicitValue says what is wrong with v as a value of the property ps ("" when nothing).
func elicitValue(ps map[string]any, v any) string {
	typ, _ := ps["type"].(string)
	switch typ {
	case "string":
		s, ok := v.(string)
		if !ok {
			return "must be a string"
		}
		if e, ok := ps["enum"].([]any); ok && !slices.Contains(e, any(s)) {
			return fmt.Sprintf("must be one of %v", e)
		}
		if one, ok := ps["oneOf"].([]any); ok && !constOf(one, s) {
			return "must be one of the form's choices"
		}
	case "number", "integer":
		f, ok := number(v)
		if !ok {
			return "must be a number"
		}
		if typ == "integer" && f != math.Trunc(f) {
			return "must be an integer"
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return "must be true or false"
		}
	case "array":
		items, ok := v.([]any)
		if !ok {
			return "must be an array of strings"
		}
		for _, it := range items {
			if _, ok := it.(string); !ok {
				return "must be an array of strings"
			}
		}
	}
	return ""
}

// constOf reports whether one of a oneOf's entries has const s (a titled enum).
func constOf(one []any, s string) bool {
	for _, o := range one {
		if m, ok := o.(map[string]any); ok && m["const"] == s {
			return true
		}
	}
	return false
}

// number is v as a float64 when it is a JSON number (decoded either way).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
