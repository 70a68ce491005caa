package studio

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

// Text assets go gzipped to clients that take gzip, whole to the others; small ones stay whole.
func TestGzip(t *testing.T) {
	js := strings.Repeat("console.log('studio');\n", 200)
	h := newHandler(fstest.MapFS{
		"dist/index.html":          {Data: []byte("<!doctype html><html><head></head><body></body></html>")},
		"dist/assets/index-Ab1.js": {Data: []byte(js)},
		"dist/assets/icon-Ef3.png": {Data: bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 600)},
	}, Options{})
	req := func(target, accept string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		if accept != "" {
			r.Header.Set("Accept-Encoding", accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	gz := req("/studio/assets/index-Ab1.js", "br, gzip;q=0.9")
	if gz.Header().Get("Content-Encoding") != "gzip" || gz.Header().Get("Vary") != "Accept-Encoding" || gz.Body.Len() >= len(js)/4 {
		t.Fatalf("gzip answer: %v, %d bytes", gz.Header(), gz.Body.Len())
	}
	zr, err := gzip.NewReader(gz.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); string(b) != js {
		t.Fatal("the gzipped body is not the file")
	}
	plain := req("/studio/assets/index-Ab1.js", "")
	if plain.Header().Get("Content-Encoding") != "" || plain.Body.String() != js || plain.Header().Get("ETag") == gz.Header().Get("ETag") {
		t.Fatalf("plain answer: %v", plain.Header())
	}
	if r := req("/studio/assets/index-Ab1.js", "gzip;q=0"); r.Header().Get("Content-Encoding") != "" {
		t.Fatal("gzip refused with q=0 was used")
	}
	if r := req("/studio/assets/icon-Ef3.png", "gzip"); r.Header().Get("Content-Encoding") != "" {
		t.Fatal("an image was gzipped")
	}
	if r := req("/studio/", "gzip"); r.Header().Get("Content-Encoding") != "" {
		t.Fatal("a page under 1 KB was gzipped")
	}
	// A conditional request with the gzip ETag is a 304.
	r := httptest.NewRequest(http.MethodGet, "/studio/assets/index-Ab1.js", nil)
	r.Header.Set("Accept-Encoding", "gzip")
	r.Header.Set("If-None-Match", gz.Header().Get("ETag"))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != http.StatusNotModified {
		t.Fatalf("conditional: %d", rec.Code)
	}
}
