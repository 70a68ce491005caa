package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/platform"
)

// lambdaMaxResponse is Lambda's limit on a synchronous response payload (6 MB).
const lambdaMaxResponse = 6 << 20

// lambdaGet serves a GET the way the deployed function does (API Gateway's event through the
// Lambda adapter) and returns the size of the response payload as aws-lambda-go encodes it.
func (s *stack) lambdaGet(t *testing.T, path, key string) (int, events.APIGatewayV2HTTPResponse) {
	t.Helper()
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: u.Path, RawQueryString: u.RawQuery,
		Headers: map[string]string{"x-api-key": key, "host": "api.example.com"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{RequestID: "r1", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: u.Path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.10"}},
	}
	resp, err := platform.HTTPHandler(s.mux, slog.New(slog.DiscardHandler))(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as aws-lambda-go's default
	if err := enc.Encode(resp); err != nil {
		t.Fatal(err)
	}
	return b.Len(), resp
}

var nextLinkRE = regexp.MustCompile(`^<([^>]+)>; rel="next"$`)

// walk follows a list's Link headers from path and returns the ids of every page's records and
// the page sizes, checking each page both against the document and as a Lambda response.
func (s *stack) walk(t *testing.T, path, key string) (ids []string, sizes []int) {
	t.Helper()
	for pages := 0; path != ""; pages++ {
		if pages > 100 {
			t.Fatalf("more than 100 pages; last %s", path)
		}
		n, lr := s.lambdaGet(t, path, key)
		if lr.StatusCode != 200 || n > lambdaMaxResponse {
			t.Fatalf("GET %s through Lambda: status %d, %d bytes (limit %d)", path, lr.StatusCode, n, lambdaMaxResponse)
		}
		res := s.do(req{method: "GET", path: path, key: key})
		if res.status != 200 {
			t.Fatalf("GET %s: %d %.300s", path, res.status, res.body)
		}
		var list []map[string]any
		if err := json.Unmarshal(res.body, &list); err != nil {
			t.Fatalf("GET %s is not a bare array: %v", path, err)
		}
		for _, m := range list {
			ids = append(ids, m["id"].(string))
		}
		sizes = append(sizes, len(list))
		path = ""
		if l := res.header.Get("Link"); l != "" {
			m := nextLinkRE.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("Link = %q", l)
			}
			path = m[1]
		}
	}
	return ids, sizes
}

// bigPrompt is a system prompt of about 99,000 characters, one in seven of them quotes: about
// 113 KB of JSON in an API response and 141 KB inside a Lambda response.
var bigPrompt = strings.Repeat(`He said "no". `, 7071)

// TestListsStayUnderLambdaLimit: 65 agents and 65 sessions with large configurations once made
// lists of over 6 MB, which Lambda refuses. Pages now hold at most limit records and 5 MiB as
// a Lambda response carries them, and the Link header leads through every record once.
func TestListsStayUnderLambdaLimit(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	prompt, _ := json.Marshal(bigPrompt)
	var agents, sessions []string
	for i := range 65 {
		res := s.do(req{method: "POST", path: "/api/v1/agent/", key: key,
			body: fmt.Sprintf(`{"system_config":{"name":"Big %d","system_prompt":%s}}`, i, prompt)})
		if res.status != 201 {
			t.Fatalf("create agent %d: %d %.300s", i, res.status, res.body)
		}
		agents = append(agents, res.json(t)["id"].(string))
		sessions = append(sessions, s.session(key, fmt.Sprintf(`{"name":"Big %d","system_prompt":%s,"llm_config":{"provider":"local"}}`, i, prompt)))
	}
	slices.Reverse(agents) // newest first
	slices.Reverse(sessions)

	for _, tt := range []struct {
		name, path string
		want       []string
	}{
		{"agents", "/api/v1/agent/", agents},
		{"sessions, largest pages", "/api/v1/sessions/?limit=100", sessions},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, sizes := s.walk(t, tt.path, key)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records over all pages (-want +got):\n%s", diff)
			}
			// 50 of these records would pass 6 MB in a Lambda response: the size cuts pages.
			if len(sizes) < 2 || sizes[0] >= 50 {
				t.Errorf("page sizes %v", sizes)
			}
			t.Logf("page sizes %v", sizes)
		})
	}
}

// TestListPaging pages small lists by limit and offset, and refuses bad paging parameters.
func TestListPaging(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	var sessions []string
	for range 5 {
		sessions = append(sessions, s.session(key, flatSession))
	}
	slices.Reverse(sessions)
	got, sizes := s.walk(t, "/api/v1/sessions/?limit=2", key)
	if diff := cmp.Diff(sessions, got); diff != "" || !cmp.Equal(sizes, []int{2, 2, 1}) {
		t.Errorf("sessions by twos: sizes %v (-want +got):\n%s", sizes, diff)
	}
	if res := s.do(req{method: "GET", path: "/api/v1/sessions/?offset=5", key: key}); string(res.body) != "[]\n" || res.header.Get("Link") != "" {
		t.Errorf("past the end: %s Link %q", res.body, res.header.Get("Link"))
	}
	if res := s.do(req{method: "GET", path: "/api/v1/sessions/?limit=4&offset=1", key: key}); res.header.Get("Link") != "" {
		t.Errorf("the last page has a Link: %q", res.header.Get("Link"))
	}

	// Versions: three, by twos.
	a := s.do(req{method: "POST", path: "/api/v1/agent/", key: key, body: supportConfig}).json(t)
	path := "/api/v1/agent/" + a["id"].(string) + "/"
	s.do(req{method: "PATCH", path: path, key: key, body: `{"system_config":{"system_prompt":"v2"}}`})
	s.do(req{method: "PATCH", path: path, key: key, body: `{"system_config":{"system_prompt":"v3"}}`})
	var nums []string
	for p := path + "versions/?limit=2"; p != ""; {
		res := s.do(req{method: "GET", path: p, key: key})
		var vs []map[string]any
		if err := json.Unmarshal(res.body, &vs); err != nil {
			t.Fatalf("versions: %d %s", res.status, res.body)
		}
		for _, v := range vs {
			nums = append(nums, v["version_number"].(string))
		}
		p = ""
		if m := nextLinkRE.FindStringSubmatch(res.header.Get("Link")); m != nil {
			p = m[1]
		}
	}
	if diff := cmp.Diff([]string{"1.0.0", "1.0.1", "1.0.2"}, nums); diff != "" {
		t.Errorf("versions by twos (-want +got):\n%s", diff)
	}

	// Events: a page of three, with the total of the executions read for it (here both: the
	// event after the page is in the second).
	sid := sessions[0]
	s.execute(key, sid, `{"content":"one"}`)
	s.execute(key, sid, `{"content":"two"}`)
	all := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/events/?limit=100", key: key}).json(t)
	total := len(all["events"].([]any))
	if total < 4 || all["total"] != float64(total) || all["has_more"] != false {
		t.Fatalf("all events: %v events, total %v, has_more %v", total, all["total"], all["has_more"])
	}
	res := s.do(req{method: "GET", path: "/api/v1/runtime/" + sid + "/events/?limit=3&offset=1", key: key})
	pg := res.json(t)
	if diff := cmp.Diff(all["events"].([]any)[1:4], pg["events"]); diff != "" || pg["total"] != float64(total) || pg["has_more"] != true {
		t.Errorf("events page: total %v has_more %v (-want +got):\n%s", pg["total"], pg["has_more"], diff)
	}
	if m := nextLinkRE.FindStringSubmatch(res.header.Get("Link")); m == nil || !strings.Contains(m[1], "offset=4") || !strings.Contains(m[1], "limit=3") {
		t.Errorf("events Link = %q", res.header.Get("Link"))
	}

	for _, p := range []string{"/api/v1/agent/", path + "versions/", "/api/v1/sessions/", "/api/v1/runtime/" + sid + "/events/"} {
		for _, q := range []string{"limit=0", "limit=101", "limit=ten", "offset=-1", "offset=x"} {
			res := s.do(req{method: "GET", path: p + "?" + q, key: key})
			if typ, msg := res.errorType(t); res.status != 400 || typ != "invalid_request_error" || !strings.Contains(res.json(t)["error"].(map[string]any)["errors"].([]any)[0].(map[string]any)["field"].(string), strings.Split(q, "=")[0]) {
				t.Errorf("GET %s?%s: %d %s %s", p, q, res.status, typ, msg)
			}
		}
	}
}

// TestFromAgentHidesForeignKeys: the key of an agent the caller may not read answers exactly
// as an unknown key does.
func TestFromAgentHidesForeignKeys(t *testing.T) {
	s := newStack(t)
	alice := s.key("alice", "acme")
	eve := s.key("eve", "evil")
	s.do(req{method: "POST", path: "/api/v1/agent/", key: alice, body: `{"system_config":{"name":"Private Desk"}}`})
	s.do(req{method: "POST", path: "/api/v1/agent/", key: alice, body: `{"is_public":true,"system_config":{"name":"Public Desk"}}`})

	answer := func(agentKey string) (int, string, string) {
		res := s.do(req{method: "GET", path: "/api/v1/sessions/from-agent/?agent_key=" + agentKey, key: eve})
		if res.status == 200 {
			return 200, "", ""
		}
		typ, msg := res.errorType(t)
		return res.status, typ, strings.ReplaceAll(msg, agentKey, "<key>")
	}
	ps, pt, pm := answer("private-desk")
	us, ut, um := answer("no-such-desk")
	if ps != 404 || pt != "not_found_error" || ps != us || pt != ut || pm != um {
		t.Errorf("foreign private key: %d %s %q; unknown key: %d %s %q; want the same 404", ps, pt, pm, us, ut, um)
	}
	if st, _, _ := answer("public-desk"); st != 200 {
		t.Errorf("another company's public agent: %d", st)
	}
}

// TestAsyncFailureIsAnEnvelope: a failed asynchronous execution carries its error as the error
// envelope does, {"type", "message"}.
func TestAsyncFailureIsAnEnvelope(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, `{"name":"V","system_prompt":"Hello {{ variables.who }}","llm_config":{"provider":"local"}}`)
	res := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/?async=true", key: key, body: `{"content":"hi"}`})
	if res.status != 202 {
		t.Fatalf("async: %d %s", res.status, res.body)
	}
	var got map[string]any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = s.do(req{method: "GET", path: res.header.Get("Location"), key: key}).json(t); got["status"] == "failed" || got["status"] == "completed" {
			break
		}
	}
	e, ok := got["error"].(map[string]any)
	if got["status"] != "failed" || !ok {
		t.Fatalf("execution = %v, want failed with an error object", got)
	}
	if msg, _ := e["message"].(string); e["type"] != "invalid_request_error" || !strings.Contains(msg, "inputs.who") || len(e) != 2 {
		t.Errorf("error = %v", e)
	}
}

// TestMessageHistoryFitsLambda: a page of the message history is cut to what a Lambda response
// holds, with has_more and a Link to the rest.
func TestMessageHistoryFitsLambda(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	content, _ := json.Marshal(map[string]any{"content": strings.Repeat(`Say "yes". `, 17_000)})
	for range 18 { // 36 messages of about 190 KB: 6.8 MB
		s.execute(key, sid, string(content))
	}
	var ids []string
	path := "/api/v1/runtime/" + sid + "/messages/?limit=200"
	for pages := 0; path != ""; pages++ {
		if pages > 40 {
			t.Fatal("more than 40 pages")
		}
		if n, lr := s.lambdaGet(t, path, key); lr.StatusCode != 200 || n > lambdaMaxResponse {
			t.Fatalf("GET %s through Lambda: status %d, %d bytes (limit %d)", path, lr.StatusCode, n, lambdaMaxResponse)
		}
		res := s.do(req{method: "GET", path: path, key: key})
		h := res.json(t)
		msgs := h["messages"].([]any)
		for _, m := range msgs {
			ids = append(ids, m.(map[string]any)["id"].(string))
		}
		path = ""
		if m := nextLinkRE.FindStringSubmatch(res.header.Get("Link")); m != nil {
			path = m[1]
		}
		if h["total"] != float64(36) || h["has_more"] != (path != "") || len(msgs) == 0 {
			t.Fatalf("page: %d messages, total %v, has_more %v, Link %q", len(msgs), h["total"], h["has_more"], res.header.Get("Link"))
		}
	}
	if slices.Sort(ids); len(ids) != 36 || len(slices.Compact(ids)) != 36 {
		t.Errorf("%d messages over all pages, want the 36 once each", len(ids))
	}
}
