package api

import (
	"errors"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

// TestReadAnswerTexts pins the field errors of an execute body that answers a paused execution,
// as readExecute reads them with the one decoder (all of them, entry by entry).
func TestReadAnswerTexts(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"tool_results":5}`, "tool_results: must be an array of objects"},
		{`{"tool_results":[]}`, "tool_results: must answer at least one tool call"},
		{`{"tool_results":[5,{"tool_call_id":1,"output":{"a":1},"is_error":"y","zz":1}]}`,
			"tool_results.0: must be an object; tool_results.1.zz: unknown field; the fields are tool_call_id, output, is_error; tool_results.1.tool_call_id: is required: a string; tool_results.1.is_error: must be a boolean"},
		{`{"approvals":[{"tool_call_id":"c","approve":"yes","reason":5}],"content":"x","inputs":{}}`,
			"approvals.0.approve: is required: true or false; approvals.0.reason: must be a string; content: must be absent when the body answers pending tool calls; inputs: must be absent when the body answers pending tool calls: the waiting execution keeps the variables it started with"},
		{`{"approvals":[{"tool_call_id":"c","approve":true}],"tool_results":[{"tool_call_id":"d","output":null}]}`, ""},
	} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(tc.body))
		_, req, err := readExecute(httptest.NewRecorder(), r, 1<<20)
		got := ""
		var de *domain.Error
		if errors.As(err, &de) {
			var parts []string
			for _, f := range de.Fields {
				parts = append(parts, f.Field+": "+f.Message)
			}
			got = strings.Join(parts, "; ")
		} else if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		} else if req.Answer == nil {
			t.Errorf("%s: no answer read", tc.body)
		}
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.body, got, tc.want)
		}
	}
}

// shaped is a field of one of two shapes: a string, or an object with n.
type shaped struct{}

func (shaped) ShapeOf(v any) reflect.Type {
	switch v.(type) {
	case string:
		return reflect.TypeFor[string]()
	case map[string]any:
		return reflect.TypeFor[struct {
			N int `json:"n"`
		}]()
	}
	return nil
}

func (*shaped) UnmarshalJSON([]byte) error { return nil }

// TestDecodeShapeOf: a field with ShapeOf is checked as the type it names for its value, and
// taken as it is when it names none.
func TestDecodeShapeOf(t *testing.T) {
	type body struct {
		X []shaped `json:"x"`
	}
	var in body
	got := decodeBody(t, `{"x":["a",{"n":1},{"n":"1","m":2},true,null]}`, &in)
	want := []domain.FieldError{{Field: "x.2.m", Message: "unknown field; the fields are n"},
		{Field: "x.2.n", Message: "must be an integer, got a string"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
	if got := decodeBody(t, `{"x":["a",{"n":1},7,[]]}`, &in); got != nil {
		t.Errorf("a string, an object with n and values it names no shape for: %v", got)
	}
}
