package mcpservers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcpservers"
	"github.com/agentorch/agentorch/shared/mcpservers/mcpserverstest"
	"github.com/agentorch/agentorch/shared/seal"
)

const (
	goodURL  = "https://mcp.example.com/mcp"
	otherURL = "https://other.example.com/mcp"
	secret   = "Bearer sk-very-secret-value"
)

var (
	alice = domain.Principal{KeyID: "k1", Owner: "alice", Company: "acme"}
	bob   = domain.Principal{KeyID: "k2", Owner: "bob", Company: "acme"}
	eve   = domain.Principal{KeyID: "k3", Owner: "eve", Company: "evil"}
	echo  = domain.MCPTool{Name: "echo", Description: "Echoes", InputSchema: map[string]any{"type": "object"}}
	sum   = domain.MCPTool{Name: "get-sum", InputSchema: map[string]any{"type": "object"}}
)

type env struct {
	svc   *mcpservers.Service
	store *mcpserverstest.Store
	conn  *fakeConnector
	audit *audittest.Store
}

func newEnv() env {
	st := mcpserverstest.NewStore()
	conn := &fakeConnector{tools: map[string][]domain.MCPTool{goodURL: {echo}, otherURL: {echo, sum}}}
	rec := audittest.NewStore()
	svc := mcpservers.New(st, conn, seal.New(seal.Static(strings.Repeat("k", 40)))).WithAudit(audit.New(rec))
	return env{svc: svc, store: st, conn: conn, audit: rec}
}

// createInput decodes a request body as the API hands it over.
func createInput(t *testing.T, body string) mcpservers.CreateInput {
	t.Helper()
	var in mcpservers.CreateInput
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return in
}

func updateInput(t *testing.T, body string) mcpservers.UpdateInput {
	t.Helper()
	var in mcpservers.UpdateInput
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return in
}

func (e env) create(t *testing.T, p domain.Principal, body string) *domain.MCPServer {
	t.Helper()
	srv, err := e.svc.Create(context.Background(), p, createInput(t, body))
	if err != nil {
		t.Fatalf("Create(%s): %v", body, err)
	}
	return srv
}

func TestCreate(t *testing.T) {
	e := newEnv()
	srv := e.create(t, alice, `{"name":"docs","url":"`+goodURL+`","description":"Docs",
		"headers":{"X-Api-Key":"k-123","Authorization":"`+secret+`"}}`)
	want := &domain.MCPServer{ID: srv.ID, Company: "acme", CreatedBy: "k1", Name: "docs", URL: goodURL, Description: "Docs",
		HeaderNames: []string{"Authorization", "X-Api-Key"}, Status: domain.MCPStatusActive, Tools: []domain.MCPTool{echo},
		ToolsAt: srv.ToolsAt, CreatedAt: srv.CreatedAt, UpdatedAt: srv.CreatedAt}
	if diff := cmp.Diff(want, srv, cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "SealedHeaders" }, cmp.Ignore())); diff != "" {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	if len(srv.SealedHeaders) == 0 || strings.Contains(string(srv.SealedHeaders), "secret") {
		t.Errorf("sealed headers %q: empty or in clear", srv.SealedHeaders)
	}
	// The connector was given the headers in clear and the default timeout.
	ep := e.conn.last()
	if ep.Headers["Authorization"] != secret || ep.Timeout != 10*time.Second || ep.URL != goodURL {
		t.Errorf("connector got %+v", ep)
	}
	got, err := e.svc.Get(context.Background(), bob, srv.ID)
	if err != nil || got.Name != "docs" {
		t.Errorf("Get by a colleague = %v, %v", got, err)
	}
	// The headers open again for the engine, with the server's timeout.
	srv2 := e.create(t, alice, `{"name":"plain","url":"`+otherURL+`","timeout_ms":2500}`)
	for _, tc := range []struct {
		srv  *domain.MCPServer
		want domain.MCPEndpoint
	}{
		{srv, domain.MCPEndpoint{URL: goodURL, Headers: map[string]string{"Authorization": secret, "X-Api-Key": "k-123"}, Timeout: 10 * time.Second}},
		{srv2, domain.MCPEndpoint{URL: otherURL, Headers: map[string]string{}, Timeout: 2500 * time.Millisecond}},
	} {
		ep, err := e.svc.Endpoint(context.Background(), tc.srv)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, ep); diff != "" {
			t.Errorf("Endpoint(%s) (-want +got):\n%s", tc.srv.Name, diff)
		}
	}
	if srv2.SealedHeaders != nil || len(srv2.HeaderNames) != 0 {
		t.Errorf("a server without headers has %v / %q", srv2.HeaderNames, srv2.SealedHeaders)
	}
}

// TestCreateRefuses: bad input is a 400 (409 for a taken name) naming the field, nothing is
// stored, and no message quotes a header value.
func TestCreateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		kind       domain.Kind
		field      string // the first field named
		msg        string // in the message
	}{
		{"ftp url", `{"name":"a","url":"ftp://mcp.example.com/"}`, domain.KindInvalid, "url", "http or https"},
		{"file url", `{"name":"a","url":"file:///etc/passwd"}`, domain.KindInvalid, "url", "http or https"},
		{"relative url", `{"name":"a","url":"/mcp"}`, domain.KindInvalid, "url", "http or https"},
		{"url without host", `{"name":"a","url":"http:///mcp"}`, domain.KindInvalid, "url", "host"},
		{"url with password", `{"name":"a","url":"https://u:pw-very-secret@mcp.example.com/"}`, domain.KindInvalid, "url", "headers"},
		{"url missing", `{"name":"a"}`, domain.KindInvalid, "url", "required"},
		{"header value a line break", `{"name":"a","url":"` + goodURL + `","headers":{"X-Key":"` + secret + `\r\nHost: evil"}}`, domain.KindInvalid, "headers.X-Key", "control"},
		{"header name invalid", `{"name":"a","url":"` + goodURL + `","headers":{"X Key":"` + secret + `"}}`, domain.KindInvalid, "headers.X Key", "header name"},
		{"header reserved", `{"name":"a","url":"` + goodURL + `","headers":{"Host":"internal"}}`, domain.KindInvalid, "headers.Host", "transport"},
		{"header twice", `{"name":"a","url":"` + goodURL + `","headers":{"X-Key":"` + secret + `","x-key":"` + secret + `"}}`, domain.KindInvalid, "headers.x-key", "case-insensitive"},
		{"headers too large", `{"name":"a","url":"` + goodURL + `","headers":{"A":"` + strings.Repeat("x", 8000) + `","B":"` + strings.Repeat("x", 8000) + `","C":"` + strings.Repeat("x", 8000) + `"}}`, domain.KindInvalid, "headers", "16384 bytes"},
		{"name missing", `{"url":"` + goodURL + `"}`, domain.KindInvalid, "name", "required"},
		{"name with a space", `{"name":"my docs","url":"` + goodURL + `"}`, domain.KindInvalid, "name", "letters, digits"},
		{"name too long", `{"name":"` + strings.Repeat("a", 65) + `","url":"` + goodURL + `"}`, domain.KindInvalid, "name", "64"},
		{"name a UUID", `{"name":"0b5a3f4e-8c4e-4d2b-9a51-2f1d7c0e9b11","url":"` + goodURL + `"}`, domain.KindInvalid, "name", "UUID"},
		{"timeout too small", `{"name":"a","url":"` + goodURL + `","timeout_ms":99}`, domain.KindInvalid, "timeout_ms", "100 to 60000"},
		{"unreachable server", `{"name":"a","url":"https://down.example.com/mcp","headers":{"Authorization":"` + secret + `"}}`, domain.KindInvalid, "url", "connection refused"},
		{"taken name", `{"name":"taken","url":"` + otherURL + `"}`, domain.KindConflict, "", `"taken"`},
		// What is wrong with the JSON shape (types, unknown fields) is the API decoder's to
		// name: shared/api TestDecodeMCPServerInputs.
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv()
			e.create(t, alice, `{"name":"taken","url":"`+goodURL+`"}`)
			_, err := e.svc.Create(context.Background(), alice, createInput(t, tc.body))
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != tc.kind {
				t.Fatalf("Create = %v, want kind %v", err, tc.kind)
			}
			if tc.field != "" && (len(de.Fields) == 0 || de.Fields[0].Field != tc.field) {
				t.Errorf("fields %+v, want first %q", de.Fields, tc.field)
			}
			if !strings.Contains(de.Message, tc.msg) {
				t.Errorf("message %q lacks %q", de.Message, tc.msg)
			}
			all, _ := json.Marshal(de.Fields)
			if strings.Contains(de.Message+string(all), "very-secret") {
				t.Errorf("the error quotes a header value: %s %s", de.Message, all)
			}
			if n := e.store.Len(); n != 1 {
				t.Errorf("%d servers stored, want the 1 made before", n)
			}
		})
	}
	// Taken is per company: another company may use the name.
	e := newEnv()
	e.create(t, alice, `{"name":"taken","url":"`+goodURL+`"}`)
	e.create(t, eve, `{"name":"taken","url":"`+goodURL+`"}`)
}

// TestConnectorFailures: a connector failure that is not the server's (an internal error) is
// not a 400, and nothing is stored.
func TestConnectorFailures(t *testing.T) {
	e := newEnv()
	e.conn.broken = errors.New("bug")
	_, err := e.svc.Create(context.Background(), alice, createInput(t, `{"name":"a","url":"`+goodURL+`"}`))
	if err == nil || domain.KindOf(err) != domain.KindInternal {
		t.Errorf("Create = %v, want an internal error", err)
	}
	if e.store.Len() != 0 {
		t.Error("stored a server whose connection failed")
	}
	// A server offering more tools than a record holds is refused.
	e = newEnv()
	big := make([]domain.MCPTool, 150)
	for i := range big {
		big[i] = domain.MCPTool{Name: fmt.Sprint("t", i), Description: strings.Repeat("d", 2500), InputSchema: map[string]any{}}
	}
	e.conn.tools[goodURL] = big
	_, err = e.svc.Create(context.Background(), alice, createInput(t, `{"name":"a","url":"`+goodURL+`"}`))
	if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), "300000 bytes") {
		t.Errorf("Create with 375 KB of tools = %v", err)
	}
}

// TestToolListsRefused: a tools/list that cannot be kept is a 400 at registration naming why,
// and on a refresh the status error with the same last_error (the tools last read stay): too
// many tools, a name listed twice, names with control or format characters.
func TestToolListsRefused(t *testing.T) {
	many := make([]domain.MCPTool, mcpservers.MaxToolsPerServer+1)
	for i := range many {
		many[i] = domain.MCPTool{Name: fmt.Sprint("t", i)}
	}
	for _, tc := range []struct {
		name  string
		tools []domain.MCPTool
		want  string
	}{
		{"too many", many, "lists 201 tools, more than the 200"},
		{"twice", []domain.MCPTool{{Name: "a"}, {Name: "b"}, {Name: "a"}}, `lists the tool "a" twice`},
		{"NUL", []domain.MCPTool{{Name: "a\x00b"}}, `control or format characters ("a\x00b")`},
		{"ESC", []domain.MCPTool{{Name: "\x1b[31mred"}}, "control or format characters"},
		{"bidi", []domain.MCPTool{{Name: "abc\u202etxt.exe"}}, `control or format characters ("abc\u202etxt.exe")`},
		{"zero width", []domain.MCPTool{{Name: "se\u200barch"}}, "control or format characters"},
		{"invalid UTF-8", []domain.MCPTool{{Name: "a\xffb"}}, "control or format characters"},
		{"empty", []domain.MCPTool{{Name: ""}}, "tool 0 has no name"},
		{"long", []domain.MCPTool{{Name: strings.Repeat("n", 129)}}, "longer than 128 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv()
			e.conn.tools[otherURL] = tc.tools
			_, err := e.svc.Create(ctx, alice, createInput(t, `{"name":"a","url":"`+otherURL+`"}`))
			if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Create = %v, want a 400 with %q", err, tc.want)
			}
			srv := e.create(t, alice, `{"name":"b","url":"`+goodURL+`"}`)
			e.conn.tools[goodURL] = tc.tools
			got, err := e.svc.Refresh(ctx, alice, srv.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != domain.MCPStatusError || !strings.Contains(got.LastError, tc.want) || !cmp.Equal(got.Tools, srv.Tools) {
				t.Errorf("refreshed: status %s, last_error %q, tools %v", got.Status, got.LastError, got.Tools)
			}
		})
	}
}

// TestServersPerCompany: a company registers at most MaxServersPerCompany servers (409 past it,
// nothing stored); another company is not counted, and a delete frees a place.
func TestServersPerCompany(t *testing.T) {
	ctx := context.Background()
	e := newEnv()
	var first *domain.MCPServer
	for i := range mcpservers.MaxServersPerCompany {
		s := e.create(t, alice, fmt.Sprintf(`{"name":"s%d","url":"%s"}`, i, goodURL))
		if first == nil {
			first = s
		}
	}
	_, err := e.svc.Create(ctx, alice, createInput(t, `{"name":"one-more","url":"`+goodURL+`"}`))
	if domain.KindOf(err) != domain.KindConflict || !strings.Contains(err.Error(), "50 MCP servers") {
		t.Errorf("one server too many = %v, want a 409 naming the limit", err)
	}
	e.create(t, eve, `{"name":"one-more","url":"`+goodURL+`"}`)
	if err := e.svc.Delete(ctx, alice, first.ID); err != nil {
		t.Fatal(err)
	}
	e.create(t, alice, `{"name":"one-more","url":"`+goodURL+`"}`)
}

// TestTenancy: another company's server is not found, the same answer as an unknown id, for
// every operation; Lookup and Resolve see the company's own servers only.
func TestTenancy(t *testing.T) {
	e := newEnv()
	ctx := context.Background()
	srv := e.create(t, alice, `{"name":"docs","url":"`+goodURL+`"}`)
	_, unknown := e.svc.Get(ctx, alice, "4a1e8f0e-0000-4000-8000-000000000000")
	for name, err := range map[string]error{
		"get":     second(e.svc.Get(ctx, eve, srv.ID)),
		"update":  second(e.svc.Update(ctx, eve, srv.ID, updateInput(t, `{"description":"mine"}`))),
		"refresh": second(e.svc.Refresh(ctx, eve, srv.ID)),
		"delete":  e.svc.Delete(ctx, eve, srv.ID),
		"lookup":  second(e.svc.Lookup(ctx, "evil", "docs")),
		"by id":   second(e.svc.Lookup(ctx, "evil", srv.ID)),
		"unknown": unknown,
	} {
		if !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	list, _, err := e.svc.List(ctx, eve, 0, 10)
	if err != nil || len(list) != 0 {
		t.Errorf("eve's list = %v, %v", list, err)
	}
	if got, _ := e.svc.Get(ctx, alice, srv.ID); got.Description != "" {
		t.Errorf("eve's update changed the server: %+v", got)
	}
}

func second[T any](_ T, err error) error { return err }

func TestUpdate(t *testing.T) {
	ctx := context.Background()
	e := newEnv()
	srv := e.create(t, alice, `{"name":"docs","url":"`+goodURL+`","headers":{"Authorization":"`+secret+`"}}`)
	e.create(t, alice, `{"name":"other","url":"`+goodURL+`"}`)
	calls := len(e.conn.calls)

	// Name, description and timeout change without a connection.
	got, err := e.svc.Update(ctx, bob, srv.ID, updateInput(t, `{"name":"docs2","description":"D","timeout_ms":500}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "docs2" || got.Description != "D" || got.TimeoutMS != 500 || len(e.conn.calls) != calls || !got.UpdatedAt.After(srv.UpdatedAt) {
		t.Errorf("updated %+v after %d connections", got, len(e.conn.calls)-calls)
	}
	if _, err := e.svc.Lookup(ctx, "acme", "docs2"); err != nil {
		t.Errorf("the new name does not resolve: %v", err)
	}

	// A taken name is a 409 and changes nothing.
	_, err = e.svc.Update(ctx, alice, srv.ID, updateInput(t, `{"name":"other"}`))
	if domain.KindOf(err) != domain.KindConflict {
		t.Errorf("rename to a taken name = %v", err)
	}

	// Stored headers never go to a new url: a change of url without headers is a 400 on headers
	// that connects nowhere; with headers, it connects with those; a failure is a 400 and
	// changes nothing.
	before, _ := e.svc.Get(ctx, alice, srv.ID)
	calls = len(e.conn.calls)
	_, err = e.svc.Update(ctx, bob, srv.ID, updateInput(t, `{"url":"`+otherURL+`"}`))
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid || len(de.Fields) != 1 || de.Fields[0].Field != "headers" || len(e.conn.calls) != calls {
		t.Errorf("url change without headers = %v after %d connections, want a 400 on headers and none", err, len(e.conn.calls)-calls)
	}
	_, err = e.svc.Update(ctx, alice, srv.ID, updateInput(t, `{"url":"https://down.example.com/","headers":{"Authorization":"other"},"description":"x"}`))
	if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("update to an unreachable url = %v", err)
	}
	if after, _ := e.svc.Get(ctx, alice, srv.ID); !cmp.Equal(before, after) {
		t.Errorf("a failed update changed the server:\n%s", cmp.Diff(before, after))
	}
	got, err = e.svc.Update(ctx, alice, srv.ID, updateInput(t, `{"url":"`+otherURL+`","headers":{"Authorization":"`+secret+`2"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ep := e.conn.last(); ep.URL != otherURL || ep.Headers["Authorization"] != secret+"2" || ep.Timeout != 500*time.Millisecond {
		t.Errorf("reconnected with %+v", ep)
	}
	// Without headers stored, a url changes alone (and connects with none).
	plain := e.create(t, alice, `{"name":"plain","url":"`+goodURL+`"}`)
	if _, err := e.svc.Update(ctx, alice, plain.ID, updateInput(t, `{"url":"`+otherURL+`"}`)); err != nil {
		t.Errorf("url change of a server without headers: %v", err)
	}
	if ep := e.conn.last(); ep.URL != otherURL || len(ep.Headers) != 0 {
		t.Errorf("reconnected with %+v", ep)
	}
	if len(got.Tools) != 2 {
		t.Errorf("tools after the url change: %v", got.Tools)
	}

	// New headers replace the whole map (and connect); null and {} clear them.
	got, err = e.svc.Update(ctx, alice, srv.ID, updateInput(t, `{"headers":{"X-Key":"v2"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ep, _ := e.svc.Endpoint(ctx, got); !cmp.Equal(ep.Headers, map[string]string{"X-Key": "v2"}) || !cmp.Equal(got.HeaderNames, []string{"X-Key"}) {
		t.Errorf("headers after replacing: %v, names %v", ep.Headers, got.HeaderNames)
	}
	for _, body := range []string{`{"headers":null}`, `{"headers":{}}`} {
		got, err = e.svc.Update(ctx, alice, srv.ID, updateInput(t, body))
		if err != nil {
			t.Fatal(err)
		}
		if ep, _ := e.svc.Endpoint(ctx, got); len(ep.Headers) != 0 || len(got.HeaderNames) != 0 || got.SealedHeaders != nil {
			t.Errorf("%s left headers %v", body, got.HeaderNames)
		}
	}

	// null description and timeout go back to none and the default; null name or url is refused.
	got, err = e.svc.Update(ctx, alice, srv.ID, updateInput(t, `{"description":null,"timeout_ms":null}`))
	if err != nil || got.Description != "" || got.TimeoutMS != 0 {
		t.Errorf("clearing = %+v, %v", got, err)
	}
	for _, body := range []string{`{"name":null}`, `{"url":null}`, `{"timeout_ms":0}`, `{"name":"bad name"}`} {
		if _, err := e.svc.Update(ctx, alice, srv.ID, updateInput(t, body)); domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("Update(%s) = %v, want invalid", body, err)
		}
	}
}

// TestRefresh: a server that fails now is recorded as such (status error, last_error, tools as
// last read), and one that works again is active with its tools read again.
func TestRefresh(t *testing.T) {
	ctx := context.Background()
	e := newEnv()
	srv := e.create(t, alice, `{"name":"docs","url":"`+goodURL+`"}`)
	delete(e.conn.tools, goodURL)
	got, err := e.svc.Refresh(ctx, alice, srv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.MCPStatusError || !strings.Contains(got.LastError, "connection refused") || len(got.Tools) != 1 || !got.ToolsAt.Equal(srv.ToolsAt) {
		t.Errorf("after a failed refresh: %+v", got)
	}
	if stored, _ := e.svc.Get(ctx, alice, srv.ID); stored.Status != domain.MCPStatusError {
		t.Error("the failure was not stored")
	}
	e.conn.tools[goodURL] = []domain.MCPTool{echo, sum}
	got, err = e.svc.Refresh(ctx, alice, srv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.MCPStatusActive || got.LastError != "" || len(got.Tools) != 2 {
		t.Errorf("after a good refresh: %+v", got)
	}
	e.conn.broken = errors.New("bug")
	if _, err := e.svc.Refresh(ctx, alice, srv.ID); domain.KindOf(err) != domain.KindInternal {
		t.Errorf("refresh with a broken connector = %v", err)
	}
}

func TestDelete(t *testing.T) {
	ctx := context.Background()
	e := newEnv()
	srv := e.create(t, alice, `{"name":"docs","url":"`+goodURL+`"}`)
	if err := e.svc.Delete(ctx, alice, srv.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Delete(ctx, alice, srv.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("second delete = %v", err)
	}
	// The name is free again.
	e.create(t, alice, `{"name":"docs","url":"`+goodURL+`"}`)
}

// TestListAndResolve: the list is newest first in pages; Resolve reads the company's servers
// once and finds them by name and by id.
func TestListAndResolve(t *testing.T) {
	ctx := context.Background()
	e := newEnv()
	var made []*domain.MCPServer
	for _, name := range []string{"a", "b", "c"} {
		made = append(made, e.create(t, alice, `{"name":"`+name+`","url":"`+goodURL+`"}`))
	}
	page, more, err := e.svc.List(ctx, alice, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	names := func(l []*domain.MCPServer) (out []string) {
		for _, s := range l {
			out = append(out, s.Name)
		}
		return out
	}
	if got := names(page); !cmp.Equal(got, []string{"c", "b"}) || !more {
		t.Errorf("first page %v, more %v", got, more)
	}
	page, more, _ = e.svc.List(ctx, alice, 2, 2)
	if got := names(page); !cmp.Equal(got, []string{"a"}) || more {
		t.Errorf("second page %v, more %v", got, more)
	}
	if page, more, _ = e.svc.List(ctx, alice, 5, 2); len(page) != 0 || more || page == nil {
		t.Errorf("past the end: %v, %v", page, more)
	}

	finds, lists := e.store.Finds, e.store.Lists
	refs := []string{"a", made[1].ID, made[0].ID, "A", "d", "", made[0].ID + "x"}
	find, err := e.svc.Resolve(ctx, "acme", refs)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"a", made[1].ID} {
		if _, ok := find(ref); !ok {
			t.Errorf("Resolve does not find %s", ref)
		}
	}
	if s, ok := find(made[0].ID); !ok || s.Name != "a" {
		t.Errorf("by id: %v, %v", s, ok)
	}
	// "c" exists but was not asked for: a run reads only the servers it binds.
	for _, ref := range []string{"A", "d", "", made[0].ID + "x", "c"} {
		if _, ok := find(ref); ok {
			t.Errorf("Resolve finds %q", ref)
		}
	}
	if e.store.Finds != finds+1 || e.store.Lists != lists {
		t.Errorf("Resolve and its lookups read the store %d times (%d lists), want 1 find", e.store.Finds-finds, e.store.Lists-lists)
	}
	if _, err := e.svc.Resolve(ctx, "acme", nil); err != nil || e.store.Finds != finds+1 {
		t.Errorf("Resolve of no refs: %v, %d reads", err, e.store.Finds-finds-1)
	}
	e.store.Fail = domain.ErrOverloaded
	if _, err := e.svc.Resolve(ctx, "acme", []string{"a"}); domain.KindOf(err) != domain.KindOverloaded {
		t.Errorf("Resolve with a failing store = %v", err)
	}
}

// TestSealedPerRecord: sealed headers copied into another record do not open there.
func TestSealedPerRecord(t *testing.T) {
	ctx := context.Background()
	e := newEnv()
	a := e.create(t, alice, `{"name":"a","url":"`+goodURL+`","headers":{"X-Key":"`+secret+`"}}`)
	b := e.create(t, alice, `{"name":"b","url":"`+goodURL+`"}`)
	b.SealedHeaders = a.SealedHeaders
	if _, err := e.svc.Endpoint(ctx, b); err == nil {
		t.Error("another record's sealed headers opened")
	}
}

func TestRecordUse(t *testing.T) {
	ctx := context.Background()
	e := newEnv()
	srv := e.create(t, alice, `{"name":"docs","url":"`+goodURL+`"}`)
	writes := func() *domain.MCPServer {
		got, err := e.svc.Get(ctx, alice, srv.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// A working connection of an active server writes nothing.
	if err := e.svc.RecordUse(ctx, srv, nil); err != nil || !writes().UpdatedAt.Equal(srv.UpdatedAt) {
		t.Fatalf("a working use wrote: %v", err)
	}
	if err := e.svc.RecordUse(ctx, srv, &domain.MCPError{Reason: "connection refused"}); err != nil {
		t.Fatal(err)
	}
	failed := writes()
	if failed.Status != domain.MCPStatusError || !strings.Contains(failed.LastError, "connection refused") || len(failed.Tools) != 1 {
		t.Fatalf("after a failed use: %+v", failed)
	}
	// Another failure for the same reason writes nothing; a working use sets it active again.
	if err := e.svc.RecordUse(ctx, failed, &domain.MCPError{Reason: "connection refused"}); err != nil || !writes().UpdatedAt.Equal(failed.UpdatedAt) {
		t.Fatalf("the same failure wrote again: %v", err)
	}
	if err := e.svc.RecordUse(ctx, failed, nil); err != nil {
		t.Fatal(err)
	}
	if got := writes(); got.Status != domain.MCPStatusActive || got.LastError != "" {
		t.Fatalf("after a working use: %+v", got)
	}
	// A record changed meanwhile is left alone, without an error.
	if err := e.svc.RecordUse(ctx, srv, &domain.MCPError{Reason: "x"}); err != nil {
		t.Fatalf("stale record: %v", err)
	}
	if got := writes(); got.Status != domain.MCPStatusActive {
		t.Fatalf("a stale use overwrote the record: %+v", got)
	}
}

// TestResolveRemembersNames: a name resolved once is read by its id next time (the store is
// asked for the id, not the name); a server renamed, replaced or deleted since is found by its
// name again, never by the id remembered.
func TestResolveRemembersNames(t *testing.T) {
	ctx := context.Background()
	e := newEnv()
	a := e.create(t, alice, `{"name":"a","url":"`+goodURL+`"}`)
	if _, err := e.svc.Lookup(ctx, "acme", "a"); err != nil {
		t.Fatal(err)
	}
	finds := e.store.Finds
	if got, err := e.svc.Lookup(ctx, "acme", "a"); err != nil || got.ID != a.ID || e.store.Finds != finds+1 {
		t.Fatalf("second lookup: %v, %v after %d reads", got, err, e.store.Finds-finds)
	}
	// Renamed away, and another server takes the name: the name finds the new one.
	if _, err := e.svc.Update(ctx, alice, a.ID, updateInput(t, `{"name":"old-a"}`)); err != nil {
		t.Fatal(err)
	}
	b := e.create(t, alice, `{"name":"a","url":"`+goodURL+`"}`)
	if got, err := e.svc.Lookup(ctx, "acme", "a"); err != nil || got.ID != b.ID {
		t.Errorf("after the rename: %v, %v, want the new server", got, err)
	}
	// Deleted: not found, though its id was remembered.
	if err := e.svc.Delete(ctx, alice, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Lookup(ctx, "acme", "a"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("after the delete: %v, want not found", err)
	}
	// Another company's server of the same name is never found through a remembered id.
	e.create(t, eve, `{"name":"a","url":"`+goodURL+`"}`)
	if _, err := e.svc.Lookup(ctx, "evil", "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Lookup(ctx, "acme", "a"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("acme finds evil's server: %v", err)
	}
}
