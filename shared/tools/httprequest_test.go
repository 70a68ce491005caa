package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// server is an httptest server that counts the requests it gets.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) addrPort(t *testing.T) netip.AddrPort {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return netip.MustParseAddrPort(u.Host)
}

// publicOnly returns options under which the given servers count as public and every other
// local address stays refused.
func publicOnly(t *testing.T, servers ...*server) Options {
	t.Helper()
	public := map[netip.AddrPort]bool{}
	for _, s := range servers {
		public[s.addrPort(t)] = true
	}
	return Options{allow: func(ap netip.AddrPort) bool { return public[ap] }}
}

func fetch(t *testing.T, o Options, input map[string]any) (string, error) {
	t.Helper()
	return newFetcher(o.withDefaults()).Call(context.Background(), input)
}

func TestFetchGet(t *testing.T) {
	var gotHeader http.Header
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		gotHeader = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = fmt.Fprintf(w, `{"method":%q,"query":%q}`, r.Method, r.URL.RawQuery)
	})
	got, err := fetch(t, publicOnly(t, s), map[string]any{
		"url":     s.URL + "/x?q=1",
		"headers": map[string]any{"Accept": "application/json", "x-trace": "abc"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "HTTP 201 Created\napplication/json\n\n" + `{"method":"GET","query":"q=1"}`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	wantHeader := map[string]string{"Accept": "application/json", "X-Trace": "abc", "User-Agent": userAgent}
	for k, v := range wantHeader {
		if gotHeader.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, gotHeader.Get(k), v)
		}
	}
}

func TestFetchPost(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = fmt.Fprintf(w, "%s %s %d %s", r.Method, r.Header.Get("Content-Type"), r.ContentLength, b)
	})
	got, err := fetch(t, publicOnly(t, s), map[string]any{
		"url": s.URL, "method": "POST", "body": `{"a":1}`,
		"headers": map[string]any{"Content-Type": "application/json"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "HTTP 200 OK\ntext/plain; charset=utf-8\n\n" + `POST application/json 7 {"a":1}`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

func TestFetchInputErrors(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {})
	for _, tc := range []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"no url", map[string]any{}, "input.url is required"},
		{"relative url", map[string]any{"url": "/path"}, "absolute http or https URL"},
		{"bad method", map[string]any{"url": s.URL, "method": "DELETE"}, `input.method must be one of ["GET" "POST"]`},
		{"body with GET", map[string]any{"url": s.URL, "body": "x"}, "only allowed with POST"},
		{"body too large", map[string]any{"url": s.URL, "method": "POST", "body": strings.Repeat("a", MaxRequestBodyBytes+1)}, "longer than 102400"},
		{"header not string", map[string]any{"url": s.URL, "headers": map[string]any{"X-N": 1.0}}, "input.headers.X-N must be a string"},
		{"headers not object", map[string]any{"url": s.URL, "headers": "Accept: */*"}, "input.headers must be an object"},
		{"host header", map[string]any{"url": s.URL, "headers": map[string]any{"Host": "internal"}}, `header "Host" is set by the tool`},
		{"hop-by-hop", map[string]any{"url": s.URL, "headers": map[string]any{"connection": "close"}}, `header "connection" is set by the tool`},
		{"transfer-encoding", map[string]any{"url": s.URL, "headers": map[string]any{"Transfer-Encoding": "chunked"}}, "is set by the tool"},
		{"bad header name", map[string]any{"url": s.URL, "headers": map[string]any{"Bad Name": "x"}}, "not a valid header name"},
		{"header injection", map[string]any{"url": s.URL, "headers": map[string]any{"X-A": "1\r\nHost: evil"}}, "line break"},
		{"unknown property", map[string]any{"url": s.URL, "timeout": 5.0}, `unknown property "timeout"`},
	} {
		_, err := fetch(t, publicOnly(t, s), tc.input)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want ErrInvalidInput containing %q", tc.name, err, tc.want)
		}
	}
	if n := s.hits.Load(); n != 0 {
		t.Errorf("server got %d requests from invalid inputs", n)
	}
}

func TestFetchRefusesNonPublic(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {})
	port := strconv.Itoa(int(s.addrPort(t).Port()))
	o := Options{resolver: fakeResolver(t, map[string]netip.Addr{"rebind.test": netip.MustParseAddr("127.0.0.1")})}
	for _, raw := range []string{
		"http://127.0.0.1:" + port + "/",
		"http://localhost:" + port + "/",
		"http://LOCALHOST./",
		"http://app.localhost/",
		"http://[::1]:" + port + "/",
		"http://10.0.0.1/",
		"http://172.16.5.4/",
		"http://192.168.0.1/admin",
		"http://169.254.169.254/latest/meta-data/iam/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://100.64.0.1/",
		"http://0.0.0.0:" + port + "/",
		"http://0x7f000001:" + port + "/",
		"http://0x7f.0.0.1/",
		"http://2130706433:" + port + "/",
		"http://017700000001/",
		"http://127.1:" + port + "/",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://[::ffff:7f00:1]:" + port + "/",
		"http://[fe80::1%25eth0]/",
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://metadata/",
		"http://rebind.test:" + port + "/", // a public-looking name that resolves to loopback
		"ftp://example.com/",
		"file:///etc/passwd",
		"gopher://example.com/",
		"http://user:pass@example.com/",
		"http://example.com:0/",
		"http://münchen.de/",
	} {
		_, err := fetch(t, o, map[string]any{"url": raw})
		if !errors.Is(err, ErrForbiddenDestination) {
			t.Errorf("%s: error %v, want ErrForbiddenDestination", raw, err)
		}
	}
	if n := s.hits.Load(); n != 0 {
		t.Errorf("the local server got %d requests", n)
	}

	// The same name is reachable once its address is admitted: the refusal above came from
	// the check of the resolved address, not from a resolver that does not work.
	o.allow = func(ap netip.AddrPort) bool { return ap == s.addrPort(t) }
	if got, err := fetch(t, o, map[string]any{"url": "http://rebind.test:" + port + "/"}); err != nil || !strings.HasPrefix(got, "HTTP 200") {
		t.Errorf("admitted rebind.test = %q, %v", got, err)
	}
}

func TestFetchRedirects(t *testing.T) {
	private := newServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "secret") })
	var public *server
	public = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/to-private":
			http.Redirect(w, r, private.URL+"/", http.StatusFound)
		case p == "/to-rebind":
			http.Redirect(w, r, "http://rebind.test:"+strconv.Itoa(int(private.addrPort(t).Port()))+"/", http.StatusFound)
		case p == "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusMovedPermanently)
		case p == "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case strings.HasPrefix(p, "/hop/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/hop/"))
			if n == 0 {
				_, _ = io.WriteString(w, "arrived")
				return
			}
			http.Redirect(w, r, public.URL+"/hop/"+strconv.Itoa(n-1), http.StatusTemporaryRedirect)
		}
	})
	o := publicOnly(t, public)
	o.resolver = fakeResolver(t, map[string]netip.Addr{"rebind.test": netip.MustParseAddr("127.0.0.1")})

	for _, tc := range []struct{ path, want string }{
		{"/to-private", "127.0.0.1 is a loopback address"},
		{"/to-rebind", "127.0.0.1 is a loopback address"},
		{"/to-metadata", "169.254.169.254 is a link-local address"},
		{"/to-file", `scheme "file" is not allowed`},
		{"/hop/6", "stopped after 5 redirects"},
	} {
		got, err := fetch(t, o, map[string]any{"url": public.URL + tc.path})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s = %q, %v; want error containing %q", tc.path, got, err, tc.want)
		}
	}
	if n := private.hits.Load(); n != 0 {
		t.Errorf("the private server got %d requests through redirects", n)
	}
	got, err := fetch(t, o, map[string]any{"url": public.URL + "/hop/5"})
	if err != nil || !strings.HasSuffix(got, "\n\narrived") {
		t.Errorf("5 redirects = %q, %v; want them followed", got, err)
	}
}

func TestFetchBodies(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR") // 16 bytes
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/long":
			_, _ = io.WriteString(w, strings.Repeat("abcdefghij", 100))
		case "/utf8":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "ééééé")
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(png)
		case "/big-binary":
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(make([]byte, 1000))
		case "/sniffed":
			w.Header()["Content-Type"] = nil // no content type: the body is sniffed
			_, _ = io.WriteString(w, "plain words")
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/problem":
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"title":"not here"}`) // exactly the 20-byte limit
		}
	})
	o := publicOnly(t, s)
	o.MaxResponseBytes = 20
	for _, tc := range []struct{ path, want string }{
		{"/long", "HTTP 200 OK\ntext/plain; charset=utf-8\n\nabcdefghijabcdefghij\n[truncated] the body is longer than 20 bytes"},
		{"/png", "HTTP 200 OK\nimage/png\n\n[binary body of 16 bytes, not shown]"},
		{"/big-binary", "HTTP 200 OK\napplication/octet-stream\n\n[binary body of more than 20 bytes, not shown]"},
		{"/sniffed", "HTTP 200 OK\n\n\nplain words"},
		{"/empty", "HTTP 204 No Content\n\n\n[empty body]"},
		{"/problem", "HTTP 404 Not Found\napplication/problem+json\n\n" + `{"title":"not here"}`},
	} {
		got, err := fetch(t, o, map[string]any{"url": s.URL + tc.path})
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.path, diff)
		}
	}
	// Cut inside the third "é" (2 bytes each): the partial character is dropped.
	o.MaxResponseBytes = 5
	got, err := fetch(t, o, map[string]any{"url": s.URL + "/utf8"})
	want := "HTTP 200 OK\ntext/plain; charset=utf-8\n\néé\n[truncated] the body is longer than 5 bytes"
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("utf8 truncation: %v (-want +got):\n%s", err, diff)
	}
}

func TestFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	o := publicOnly(t, s)
	o.Timeout = 50 * time.Millisecond
	_, err := fetch(t, o, map[string]any{"url": s.URL})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 50ms") {
		t.Errorf("error %v, want a timeout after 50ms", err)
	}

	// The caller's deadline bounds the call too, and is reported as the caller's.
	o.Timeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = newFetcher(o.withDefaults()).Call(ctx, map[string]any{"url": s.URL})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("error %v, want the caller's deadline", err)
	}
}

func TestFetchCustomClient(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	// Another package's test: its own client and the guard off.
	got, err := fetch(t, Options{HTTPClient: s.Client(), AllowPrivate: true}, map[string]any{"url": s.URL})
	if err != nil || !strings.HasSuffix(got, "\n\nok") {
		t.Errorf("custom client = %q, %v", got, err)
	}
	// A custom client alone does not lift the URL checks.
	if _, err := fetch(t, Options{HTTPClient: s.Client()}, map[string]any{"url": s.URL}); !errors.Is(err, ErrForbiddenDestination) {
		t.Errorf("custom client without AllowPrivate: %v, want ErrForbiddenDestination", err)
	}
}
