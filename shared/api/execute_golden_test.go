package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

var updateExecute = flag.Bool("update-execute", false, "rewrite testdata/execute_golden.json")

// executing is the sessions feature behind the real runtime handlers: the real service over no
// store, so that a body the edge and the feature accept reaches the first store call, which
// answers errValidated in its place.
type executing struct{ *sessions.Service }

func (e executing) Execute(ctx context.Context, p domain.Principal, sid string, req sessions.ExecuteRequest, obs sessions.Observer) (_ *sessions.Result, err error) {
	defer guard(&err)
	return e.Service.Execute(ctx, p, sid, req, obs)
}

// goldenFetch answers a fetch by the URL's host: fail.example refuses, html.example answers a
// web page, any other host a PNG.
type goldenFetch struct{ png []byte }

func (f goldenFetch) Fetch(_ context.Context, raw string, _ int64) ([]byte, string, error) {
	switch {
	case strings.Contains(raw, "fail.example"):
		return nil, "", domain.Errorf(domain.KindInvalid, "the address is not public")
	case strings.Contains(raw, "html.example"):
		return []byte("<html></html>"), "text/html; charset=utf-8", nil
	}
	return f.png, "image/png", nil
}

const goldenSession = "00000000-0000-4000-8000-000000000001"

// executeCases are execute bodies whose content or answer is wrong, alone and together with
// what the edge checks before them, as the conformance suite sends them.
func executeCases(pngURL string) []struct{ name, query, body string } {
	text := func(n int) string { return `{"type":"text","text":"` + strings.Repeat("t", n) + `"}` }
	blocks := func(n int) string {
		b := make([]string, n)
		for i := range b {
			b[i] = text(1)
		}
		return "[" + strings.Join(b, ",") + "]"
	}
	results := func(n int, entry string) string {
		b := make([]string, n)
		for i := range b {
			b[i] = entry
		}
		return "[" + strings.Join(b, ",") + "]"
	}
	img := func(u string) string { return `{"type":"image_url","image_url":{"url":"` + u + `"}}` }
	return []struct{ name, query, body string }{
		// content: its shape
		{"content ok", "", `{"content":"hello"}`},
		{"content absent", "", `{}`},
		{"content null", "", `{"content":null}`},
		{"content a number", "", `{"content":5}`},
		{"content an object", "", `{"content":{"type":"text","text":"hi"}}`},
		{"content a boolean", "", `{"content":true}`},
		{"content blank", "", `{"content":" \n "}`},
		{"content too long", "", `{"content":"` + strings.Repeat("c", sessions.MaxTextBytes+1) + `"}`},
		{"content empty array", "", `{"content":[]}`},
		{"content too many blocks", "", `{"content":` + blocks(sessions.MaxContentBlocks+1) + `}`},
		{"content blocks at the limit", "", `{"content":` + blocks(sessions.MaxContentBlocks) + `}`},
		{"block a number", "", `{"content":[5]}`},
		{"block null", "", `{"content":[null]}`},
		{"block a string", "", `{"content":["hi"]}`},
		{"block an array", "", `{"content":[[]]}`},
		{"block without type", "", `{"content":[{"text":"hi"}]}`},
		{"block type null", "", `{"content":[{"type":null,"text":"hi"}]}`},
		{"block type a number", "", `{"content":[{"type":5,"text":"hi"}]}`},
		{"block type an object", "", `{"content":[{"type":{"a":1},"zz":1}]}`},
		{"block type unknown", "", `{"content":[{"type":"audio","zz":1}]}`},
		{"block type unknown quoted", "", `{"content":[{"type":"au\"di\u00e9o\n","zz":1}]}`},
		{"block type wrong case", "", `{"content":[{"Type":"text","text":"hi"}]}`},
		{"block type wrong case value", "", `{"content":[{"type":"Text","text":"hi"}]}`},
		// text blocks
		{"text ok", "", `{"content":[{"type":"text","text":"hi"}]}`},
		{"text unknown fields", "", `{"content":[{"type":"text","text":"hi","zz":1,"aa":2}]}`},
		{"text with another type's field", "", `{"content":[{"type":"text","text":"hi","image_url":{"url":"x"}}]}`},
		{"text key wrong case", "", `{"content":[{"type":"text","Text":"hi"}]}`},
		{"text long unknown key", "", `{"content":[{"type":"text","text":"hi","` + strings.Repeat("k", 100) + `":1}]}`},
		{"text missing", "", `{"content":[{"type":"text"}]}`},
		{"text null", "", `{"content":[{"type":"text","text":null}]}`},
		{"text a number", "", `{"content":[{"type":"text","text":5}]}`},
		{"text blank", "", `{"content":[{"type":"text","text":"  "}]}`},
		{"text wrong and unknown", "", `{"content":[{"type":"text","text":5,"zz":1}]}`},
		{"text blocks too long together", "", `{"content":[` + text(sessions.MaxTextBytes/2+1) + `,` + text(sessions.MaxTextBytes/2) + `]}`},
		{"text second block wrong", "", `{"content":[{"type":"text","text":"hi"},{"type":"text","text":[]}]}`},
		{"text tenth block unknown", "", `{"content":[` + strings.Repeat(text(1)+",", 10) + `{"type":"text","text":"x","y":1}]}`},
		// image_url blocks
		{"image ok", "", `{"content":[` + img(pngURL) + `]}`},
		{"image with detail", "", `{"content":[{"type":"image_url","image_url":{"url":"` + pngURL + `","detail":{"any":[1.50]}}}]}`},
		{"image_url missing", "", `{"content":[{"type":"image_url"}]}`},
		{"image_url null", "", `{"content":[{"type":"image_url","image_url":null}]}`},
		{"image_url a string", "", `{"content":[{"type":"image_url","image_url":"https://x.example/a.png"}]}`},
		{"image_url an array", "", `{"content":[{"type":"image_url","image_url":[]}]}`},
		{"image_url unknown field", "", `{"content":[{"type":"image_url","image_url":{"url":"` + pngURL + `","zz":1,"ab":2}}]}`},
		{"image_url unknown both levels", "", `{"content":[{"type":"image_url","zz":1,"image_url":{"url":"x","yy":1}}]}`},
		{"image_url unknown and not an object", "", `{"content":[{"type":"image_url","zz":1,"image_url":5}]}`},
		{"image_url dotted unknown key", "", `{"content":[{"type":"image_url","image_url.x":1,"image_url":7}]}`},
		{"image_url nested unknown and no url", "", `{"content":[{"type":"image_url","image_url":{"yy":1}}]}`},
		{"image_url url missing", "", `{"content":[{"type":"image_url","image_url":{}}]}`},
		{"image_url url a number", "", `{"content":[{"type":"image_url","image_url":{"url":5}}]}`},
		{"image_url url empty", "", `{"content":[{"type":"image_url","image_url":{"url":""}}]}`},
		{"image_url url null", "", `{"content":[{"type":"image_url","image_url":{"url":null,"detail":"high"}}]}`},
		{"image_url with text field", "", `{"content":[{"type":"image_url","image_url":{"url":"` + pngURL + `"},"text":"x"}]}`},
		{"image_url ftp", "", `{"content":[` + img("ftp://x.example/a.png") + `]}`},
		{"image_url not base64", "", `{"content":[` + img("data:image/png,abc") + `]}`},
		{"image_url media type", "", `{"content":[` + img("data:image/bmp;base64,AAAA") + `]}`},
		{"image_url bad base64", "", `{"content":[` + img("data:image/png;base64,!!!!") + `]}`},
		{"image_url declares png", "", `{"content":[` + img("data:image/png;base64,"+base64.StdEncoding.EncodeToString([]byte("just some text"))) + `]}`},
		{"image_url fetch refused", "", `{"content":[` + img("https://fail.example/a.png") + `]}`},
		{"image_url fetch html", "", `{"content":[` + img("https://html.example/a.png") + `]}`},
		{"image_url fetched", "", `{"content":[` + img("https://ok.example/a.png") + `,{"type":"text","text":"what is it?"}]}`},
		// file blocks
		{"file ok", "", `{"content":[{"type":"file","file_url":"data:text/plain;base64,` + base64.StdEncoding.EncodeToString([]byte("hello")) + `"}]}`},
		{"file_url missing", "", `{"content":[{"type":"file"}]}`},
		{"file_url a number", "", `{"content":[{"type":"file","file_url":5}]}`},
		{"file_url empty", "", `{"content":[{"type":"file","file_url":""}]}`},
		{"file_url object", "", `{"content":[{"type":"file","file_url":{"url":"x"}}]}`},
		{"file unknown field", "", `{"content":[{"type":"file","file_url":"x","name":"a.pdf"}]}`},
		{"file media type", "", `{"content":[{"type":"file","file_url":"data:application/zip;base64,AAAA"}]}`},
		{"file fetch html", "", `{"content":[{"type":"file","file_url":"https://html.example/a"}]}`},
		// the order of a content's errors
		{"first block's load before second's shape", "", `{"content":[` + img("data:image/png,abc") + `,{"type":"text","zz":1}]}`},
		{"first block's fetch before second's shape", "", `{"content":[` + img("https://fail.example/a.png") + `,5]}`},
		{"second block's shape after a good first", "", `{"content":[` + img(pngURL) + `,{"type":"file","file_url":"x","q":1}]}`},
		{"blocks too many and wrong", "", `{"content":[5,` + strings.TrimPrefix(blocks(sessions.MaxContentBlocks), "[") + "}"},
		{"text too long before a later block", "", `{"content":[` + text(sessions.MaxTextBytes+1) + `,5]}`},
		// what the edge and the feature check before the content
		{"unknown top-level key and bad content", "", `{"content":5,"contents":"x"}`},
		{"bad inputs and bad content", "", `{"content":[5],"inputs":[]}`},
		{"bad correlation_id type and bad content", "", `{"content":[5],"correlation_id":5}`},
		{"long correlation_id and bad content", "", `{"content":[5],"correlation_id":"` + strings.Repeat("x", 257) + `"}`},
		{"bad response_format and bad content", "", `{"content":[5],"response_format":"xml"}`},
		{"bad async query and bad content", "?async=maybe", `{"content":[5]}`},
		{"bad content streamed", "?stream=true", `{"content":[{"type":"text"}]}`},
		{"bad content in another session", "@bad-session", `{"content":[5]}`},
		// answers
		{"results ok", "", `{"tool_results":[{"tool_call_id":"c1","output":"done"}]}`},
		{"results a number", "", `{"tool_results":5}`},
		{"results null", "", `{"tool_results":null}`},
		{"results an object", "", `{"tool_results":{"tool_call_id":"c1"}}`},
		{"results empty", "", `{"tool_results":[]}`},
		{"results too many", "", `{"tool_results":` + results(129, `{"tool_call_id":"c","zz":1}`) + `}`},
		{"results at the limit", "", `{"tool_results":` + results(128, `5`) + `}`},
		{"results entries wrong", "", `{"tool_results":[5,null,"x",{"tool_call_id":1,"output":{"a":1},"is_error":"y","zz":1,"Output":2}]}`},
		{"results id missing", "", `{"tool_results":[{"output":"x"}]}`},
		{"results id null", "", `{"tool_results":[{"tool_call_id":null}]}`},
		{"results id empty", "", `{"tool_results":[{"tool_call_id":""}]}`},
		{"results id twice", "", `{"tool_results":[{"tool_call_id":"a"},{"tool_call_id":"a"}]}`},
		{"results is_error null", "", `{"tool_results":[{"tool_call_id":"a","is_error":null,"output":[1,{"b":2,"a":1}]}]}`},
		{"results is_error a string", "", `{"tool_results":[{"tool_call_id":"a","is_error":"true"}]}`},
		{"results unknown fields sorted", "", `{"tool_results":[{"tool_call_id":"a","zz":1,"aa":2,"` + strings.Repeat("k", 80) + `":3}]}`},
		{"approvals ok", "", `{"approvals":[{"tool_call_id":"c1","approve":false,"reason":"no"}]}`},
		{"approvals a string", "", `{"approvals":"yes"}`},
		{"approvals empty", "", `{"approvals":[]}`},
		{"approvals entries wrong", "", `{"approvals":[true,{"tool_call_id":"c","approve":"yes","reason":5,"why":1}]}`},
		{"approvals approve missing", "", `{"approvals":[{"tool_call_id":"c"}]}`},
		{"approvals approve null reason null", "", `{"approvals":[{"tool_call_id":"c","approve":null,"reason":null}]}`},
		{"approvals id a number", "", `{"approvals":[{"tool_call_id":7,"approve":true}]}`},
		{"elicitations ok", "", `{"elicitations":[{"tool_call_id":"c1","action":"accept","content":{"age":3}}]}`},
		{"elicitations a string", "", `{"elicitations":"yes"}`},
		{"elicitations empty", "", `{"elicitations":[]}`},
		{"elicitations entries wrong", "", `{"elicitations":[true,{"tool_call_id":"c","action":5,"content":"x","why":1}]}`},
		{"elicitations action unknown", "", `{"elicitations":[{"tool_call_id":"c","action":"maybe"},{"tool_call_id":"d","action":"decline","content":{}}]}`},
		{"elicitations with approvals", "", `{"elicitations":[{"tool_call_id":"c","action":"cancel"}],"approvals":[{"tool_call_id":"d","approve":true}]}`},
		{"answer both", "", `{"approvals":[{"tool_call_id":"c","approve":true}],"tool_results":[{"tool_call_id":"d","output":null}]}`},
		{"answer both wrong", "", `{"approvals":5,"tool_results":[5]}`},
		{"answer with content", "", `{"tool_results":[{"tool_call_id":"d"}],"content":"x"}`},
		{"answer with bad content", "", `{"tool_results":[{"tool_call_id":"d"}],"content":[{"type":"text","zz":1}]}`},
		{"answer with inputs", "", `{"approvals":[{"tool_call_id":"c","approve":"yes","reason":5}],"content":"x","inputs":{}}`},
		{"answer with null content and inputs", "", `{"tool_results":[{"tool_call_id":"d"}],"content":null,"inputs":null}`},
		{"answer with an unknown top-level key", "", `{"tool_results":5,"tool_result":[]}`},
		{"answer with bad response_format", "", `{"tool_results":5,"response_format":"xml"}`},
		{"answer in another session", "@bad-session", `{"tool_results":[{"tool_call_id":"d"}]}`},
		{"answer streamed", "?stream=1", `{"approvals":[{"tool_call_id":"c","approve":1}]}`},
	}
}

// TestExecuteGolden holds the status and body of each bad execute body (its content and the
// answer to a paused execution: field paths, messages and their order) to
// testdata/execute_golden.json, written from the code before the one decoder took them over
// (-update-execute rewrites it).
func TestExecuteGolden(t *testing.T) {
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, image.NewRGBA(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	pngURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBuf.Bytes())
	p := domain.Principal{KeyID: "k1", Owner: "o1", Company: "c1"}
	svc := executing{sessions.New(sessions.Deps{Fetch: goldenFetch{png: pngBuf.Bytes()}}, sessions.Limits{})}
	h := api.NewRuntime(svc, api.Options{Auth: openapiAuth{p: p}})
	got := map[string]answer{}
	for _, tc := range executeCases(pngURL) {
		for _, yaml := range []bool{false, true} {
			sid, query := goldenSession, tc.query
			if s, ok := strings.CutPrefix(query, "@"); ok {
				sid, query = s, ""
			}
			r := httptest.NewRequest(http.MethodPost, "/api/v1/runtime/"+sid+"/execute/"+query, strings.NewReader(tc.body))
			r.Header.Set("X-API-Key", "k")
			if yaml {
				r.Header.Set("Content-Type", "application/yaml")
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			a := answer{Status: w.Code, Body: json.RawMessage(strings.TrimSpace(w.Body.String()))}
			if !json.Valid(a.Body) {
				a.Body, _ = json.Marshal(string(a.Body)) // a stream's events
			}
			if yaml {
				if want := got[tc.name]; want.Status != a.Status || string(want.Body) != string(a.Body) {
					t.Errorf("%s: as YAML %d %s, as JSON %d %s", tc.name, a.Status, a.Body, want.Status, want.Body)
				}
				continue
			}
			if _, dup := got[tc.name]; dup {
				t.Fatalf("two cases named %q", tc.name)
			}
			got[tc.name] = a
		}
	}
	checkGolden(t, filepath.Join("testdata", "execute_golden.json"), *updateExecute, got)
}

// answerCapture records the answer an execute body carried to the feature.
type answerCapture struct {
	executing
	got *sessions.Answer
}

func (c *answerCapture) Execute(_ context.Context, _ domain.Principal, _ string, req sessions.ExecuteRequest, _ sessions.Observer) (*sessions.Result, error) {
	c.got = req.Answer
	return nil, errValidated
}

// TestAnswerValues holds what the feature is handed for each form of an answer's values: an
// output that is not a string goes to the model as its JSON (keys sorted, numbers as sent),
// null as "null", an absent one as "".
func TestAnswerValues(t *testing.T) {
	p := domain.Principal{KeyID: "k1", Owner: "o1", Company: "c1"}
	for _, tc := range []struct {
		body string
		want *sessions.Answer
	}{
		{`{"content":"hi"}`, nil},
		{`{"tool_results":[{"tool_call_id":"a","output":"x <&> \u00e9"},{"tool_call_id":"b","output":null,"is_error":true},{"tool_call_id":"c"},` +
			`{"tool_call_id":"d","output":{"z":[1.50,1e3,-0],"a":"<b>","m":{"y":null,"x":true}},"is_error":false},{"tool_call_id":"e","output":12345678901234567890}]}`,
			&sessions.Answer{HasResults: true, ToolResults: []sessions.ToolResultInput{
				{ToolCallID: "a", Output: "x <&> é"}, {ToolCallID: "b", Output: "null", IsError: true}, {ToolCallID: "c"},
				{ToolCallID: "d", Output: `{"a":"\u003cb\u003e","m":{"x":true,"y":null},"z":[1.50,1e3,-0]}`},
				{ToolCallID: "e", Output: "12345678901234567890"}}}},
		{`{"approvals":[{"tool_call_id":"a","approve":true,"reason":null},{"tool_call_id":"b","approve":false,"reason":"no"}]}`,
			&sessions.Answer{HasApprovals: true, Approvals: []sessions.ApprovalInput{{ToolCallID: "a", Approve: true}, {ToolCallID: "b", Reason: "no"}}}},
	} {
		for _, yaml := range []bool{false, true} {
			c := &answerCapture{}
			h := api.NewRuntime(c, api.Options{Auth: openapiAuth{p: p}})
			r := httptest.NewRequest(http.MethodPost, "/api/v1/runtime/"+goldenSession+"/execute/", strings.NewReader(tc.body))
			r.Header.Set("X-API-Key", "k")
			if yaml {
				r.Header.Set("Content-Type", "application/yaml")
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusConflict {
				t.Fatalf("%s: %d %s, want the feature's 409", tc.body, w.Code, w.Body)
			}
			want := tc.want
			if yaml && want != nil && len(want.ToolResults) > 3 {
				// YAML reads numbers as numbers: 1.50 is 1.5, 1e3 is 1000, -0 is 0 (an integer
				// too large for int64 stays as sent).
				w := *want
				w.ToolResults = append([]sessions.ToolResultInput(nil), want.ToolResults...)
				w.ToolResults[3].Output = `{"a":"\u003cb\u003e","m":{"x":true,"y":null},"z":[1.5,1000,0]}`
				want = &w
			}
			if d := cmp.Diff(want, c.got); d != "" {
				t.Errorf("%s (yaml %v): answer (-want +got):\n%s", tc.body, yaml, d)
			}
		}
	}
}
