package api

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

// hookedInput uses the decoder's words and hooks that the search and knowledge-base bodies
// need: got:"not", a null item of an items:"first" list, UnclippedKeys and WrongValue.
type hookedInput struct {
	Query        *string            `json:"query" got:"not"`
	IDs          []string           `json:"ids" want:"an array of ids" items:"first"`
	Size         *float64           `json:"size"`
	Sub          *struct{ A int }   `json:"sub" want:"an object with a" got:"not"`
	List         []*string          `json:"list"`
	Map          map[string]float64 `json:"map"`
	domain.Shape `json:"-"`
	sent         map[string]any
}

func (*hookedInput) UnclippedKeys() {}

func (in *hookedInput) WrongValue(path string, v any) {
	if in.sent == nil {
		in.sent = map[string]any{}
	}
	in.sent[path] = v
}

// TestDecodeHooks: the wrong values come with their words and, to WrongValue, their values;
// unknown keys are named whole; a null item of an items:"first" list is refused.
func TestDecodeHooks(t *testing.T) {
	long := strings.Repeat("k", 70)
	var in hookedInput
	body := `{"query":5,"ids":["a",null],"size":"5","sub":[],"list":[null,true,"x"],"map":{"m":"v"},"` + long + `":1}`
	if errs := decodeBody(t, body, &in); errs != nil {
		t.Fatalf("decode answered %v, want the errors handed over", errs)
	}
	if d := cmp.Diff([]domain.FieldError{{Field: long, Message: "unknown field; the fields are query, ids, size, sub, list, map"}}, in.Unknown); d != "" {
		t.Errorf("unknown (-want +got):\n%s", d)
	}
	if !cmp.Equal(in.Objects, []string{""}) {
		t.Errorf("objects of the unknown keys = %q, want the body's", in.Objects)
	}
	wantWrong := []domain.FieldError{
		{Field: "query", Message: "must be a string, not a number"},
		{Field: "ids", Message: "must be an array of ids: item 1 is null"},
		{Field: "size", Message: "must be a number, got a string"},
		{Field: "sub", Message: "must be an object with a, not an array"},
		{Field: "list.1", Message: "must be a string, got a boolean"},
		{Field: "map.m", Message: "must be a number, got a string"},
	}
	if d := cmp.Diff(wantWrong, in.Wrong); d != "" {
		t.Errorf("wrong (-want +got):\n%s", d)
	}
	wantSent := map[string]any{"query": "5", "size": "5", "sub": []any{}, "list.1": true, "map.m": "v"}
	got := map[string]any{}
	for k, v := range in.sent {
		got[k] = v
		if n, ok := v.(interface{ String() string }); ok {
			got[k] = n.String() // json.Number
		}
	}
	if d := cmp.Diff(wantSent, got); d != "" {
		t.Errorf("values sent (-want +got):\n%s", d)
	}
	if in.Query != nil || in.Size != nil || in.Sub != nil || len(in.List) != 3 || in.List[0] != nil || in.List[1] != nil || *in.List[2] != "x" {
		t.Errorf("decoded %+v", in)
	}
}
