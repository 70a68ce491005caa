package studio

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func built() fstest.MapFS {
	return fstest.MapFS{
		"dist/index.html":           {Data: []byte("<!doctype html><html><head><title>s</title></head><body></body></html>")},
		"dist/assets/index-Ab1.js":  {Data: []byte("console.log(1)")},
		"dist/assets/index-Cd2.css": {Data: []byte("body{}")},
		"dist/.keep":                {Data: nil},
	}
}

func get(h http.Handler, method, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

func TestServe(t *testing.T) {
	h := newHandler(built(), Options{})
	const immutable = "public, max-age=31536000, immutable"
	cases := []struct {
		method, path string
		status       int
		ctype, cache string
		body         string // a part of the body
	}{
		{"GET", "/studio", 200, "text/html; charset=utf-8", "no-cache", "<title>s</title>"},
		{"GET", "/studio/", 200, "text/html; charset=utf-8", "no-cache", "<title>s</title>"},
		{"HEAD", "/studio/", 200, "text/html; charset=utf-8", "no-cache", ""},
		{"GET", "/studio/agents/5d8f4c1e", 200, "text/html; charset=utf-8", "no-cache", "<title>s</title>"},
		{"GET", "/studio/assets/index-Ab1.js", 200, "text/javascript; charset=utf-8", immutable, "console.log(1)"},
		{"GET", "/studio/assets/index-Cd2.css", 200, "text/css; charset=utf-8", immutable, "body{}"},
		{"GET", "/studio/assets/nothing.js", 404, "text/plain; charset=utf-8", "no-cache", "not found"},
		{"GET", "/studio/.keep", 404, "text/plain; charset=utf-8", "no-cache", "not found"},
		{"GET", "/studio/missing.png", 404, "text/plain; charset=utf-8", "no-cache", "not found"},
		{"GET", "/studio/assets/../../studio.go", 404, "text/plain; charset=utf-8", "no-cache", "not found"},
		{"POST", "/studio/", 405, "text/plain; charset=utf-8", "", "method not allowed"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			rec := get(h, c.method, c.path)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d (body %q)", rec.Code, c.status, rec.Body)
			}
			if got := rec.Header().Get("Content-Type"); got != c.ctype {
				t.Errorf("Content-Type %q, want %q", got, c.ctype)
			}
			if got := rec.Header().Get("Cache-Control"); got != c.cache {
				t.Errorf("Cache-Control %q, want %q", got, c.cache)
			}
			if !strings.Contains(rec.Body.String(), c.body) {
				t.Errorf("body %q, want it to contain %q", rec.Body, c.body)
			}
			if c.method == "HEAD" && rec.Body.Len() != 0 {
				t.Errorf("HEAD with a body: %q", rec.Body)
			}
			csp := rec.Header().Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'self'", "script-src 'self';", "style-src 'self';", "frame-ancestors 'none'", "base-uri 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
				t.Errorf("CSP %q allows inline code", csp)
			}
		})
	}
}

func TestRevalidate(t *testing.T) {
	h := newHandler(built(), Options{})
	first := get(h, "GET", "/studio/")
	etag := first.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on index.html")
	}
	req := httptest.NewRequest("GET", "/studio/", nil)
	req.Header.Set("If-None-Match", etag)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Errorf("status %d for a matching If-None-Match, want 304", rec.Code)
	}
}

func TestNotBuilt(t *testing.T) {
	h := newHandler(fstest.MapFS{"dist/.keep": {}}, Options{})
	for _, p := range []string{"/studio", "/studio/", "/studio/assets/index-Ab1.js"} {
		rec := get(h, "GET", p)
		if rec.Code != http.StatusServiceUnavailable || strings.TrimSpace(rec.Body.String()) != NotBuilt {
			t.Errorf("GET %s: %d %q, want 503 %q", p, rec.Code, rec.Body, NotBuilt)
		}
		if rec.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: no Content-Security-Policy", p)
		}
	}
}

func TestStreamBase(t *testing.T) {
	h := newHandler(built(), Options{StreamBaseURL: "https://abc.lambda-url.us-east-1.on.aws/x?\"<"})
	rec := get(h, "GET", "/studio/")
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "connect-src 'self' https://abc.lambda-url.us-east-1.on.aws;") {
		t.Errorf("CSP %q does not allow the stream origin alone", csp)
	}
	want := `<meta name="agentorch-stream-base" content="https://abc.lambda-url.us-east-1.on.aws/x?&#34;&lt;" />`
	if !strings.Contains(rec.Body.String(), want) {
		t.Errorf("index %q lacks the escaped stream base %q", rec.Body, want)
	}
	if csp := policy("javascript:alert(1)"); !strings.Contains(csp, "connect-src 'self';") {
		t.Errorf("a non-http stream base joined connect-src: %q", csp)
	}
}
