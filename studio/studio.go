// Package studio serves the studio, the web interface over the public API, from the files its
// Vite build wrote into dist/ (embedded: `make build-studio` builds them, they are not
// committed). It is static: the studio talks to the API with the user's own credentials, like
// any other client, so this package adds no endpoint and knows nothing of the API.
package studio

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"
)

//go:embed all:dist
var dist embed.FS

// Prefix is the path the studio is served under.
const Prefix = "/studio/"

// NotBuilt is the body of every answer when dist/ holds no build (a fresh clone before
// `make build-studio`).
const NotBuilt = "the studio is not built: run make build-studio"

// Options are what the serving deployment adds to the static files.
type Options struct {
	// StreamBaseURL is where the studio sends streaming executes when they do not go through the
	// API's own origin (a Lambda function URL on AWS); its origin joins connect-src. Empty: the
	// API's origin streams.
	StreamBaseURL string
	// UploadOrigins are where large files are PUT with presigned URLs (the S3 endpoint): they
	// join connect-src.
	UploadOrigins []string
}

// Handler serves the embedded build: index.html at /studio and /studio/ and for any path below
// that is not a file (the studio's own routes), fingerprinted assets under /studio/assets/ with
// a year's immutable cache, and a strict Content-Security-Policy on every answer.
func Handler(opts Options) http.Handler {
	return newHandler(dist, opts)
}

type handler struct {
	files fs.FS
	index []byte // nil when not built
	csp   string
	// encoded holds, by file name, the ETag and gzip form of what was served, computed on first
	// use: the files never change while the process runs.
	encoded sync.Map
}

type encoded struct {
	etag   string
	gz     []byte // nil when not worth compressing
	gzETag string
}

// minGzip is the smallest body worth compressing.
const minGzip = 1024

func (h *handler) encode(name string, body []byte, ct string) *encoded {
	if e, ok := h.encoded.Load(name); ok {
		return e.(*encoded)
	}
	sum := sha256.Sum256(body)
	e := &encoded{etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	if len(body) >= minGzip && compressible(ct) {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // the level is valid
		if _, err := zw.Write(body); err == nil && zw.Close() == nil && b.Len() < len(body) {
			e.gz, e.gzETag = b.Bytes(), `"`+hex.EncodeToString(sum[:8])+`-gz"`
		}
	}
	v, _ := h.encoded.LoadOrStore(name, e)
	return v.(*encoded)
}

// compressible reports the text types: HTML, CSS, JavaScript, JSON, SVG.
func compressible(ct string) bool {
	return strings.HasPrefix(ct, "text/") || strings.Contains(ct, "javascript") || strings.Contains(ct, "json") ||
		strings.Contains(ct, "svg")
}

func newHandler(fsys fs.FS, opts Options) *handler {
	sub, err := fs.Sub(fsys, "dist")
	if err != nil {
		sub = fsys
	}
	h := &handler{files: sub, csp: policy(opts.StreamBaseURL, opts.UploadOrigins...)}
	if b, err := fs.ReadFile(sub, "index.html"); err == nil {
		h.index = withStreamBase(b, opts.StreamBaseURL)
	}
	return h
}

// policy is the Content-Security-Policy: nothing inline, nothing from elsewhere; the stream
// origin, when set, is the one other address the studio may fetch.
func policy(streamBase string, uploads ...string) string {
	connect := "'self'"
	for _, o := range append([]string{streamBase}, uploads...) {
		if u, err := url.Parse(o); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
			connect += " " + u.Scheme + "://" + u.Host
		}
	}
	return "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
		"connect-src " + connect + "; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
}

// withStreamBase gives the page the stream address in a meta tag (read by src/api.ts), so that
// the first screen needs no request for its configuration.
func withStreamBase(index []byte, streamBase string) []byte {
	if streamBase == "" {
		return index
	}
	tag := `<meta name="agentorch-stream-base" content="` + html.EscapeString(streamBase) + `" />` + "\n  </head>"
	return bytes.Replace(index, []byte("</head>"), []byte(tag), 1)
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if h.index == nil {
		hd.Set("Cache-Control", "no-store")
		http.Error(w, NotBuilt, http.StatusServiceUnavailable)
		return
	}
	rel, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		rel = "" // /studio itself
	}
	rel = path.Clean("/" + rel)[1:]
	if strings.HasPrefix(rel, "assets/") {
		h.serveAsset(w, r, rel)
		return
	}
	if rel != "" && rel != "index.html" && path.Ext(rel) != "" {
		// A file name outside assets/ that the build does not have: not a route of the studio.
		if b, err := fs.ReadFile(h.files, rel); err == nil && !strings.HasPrefix(path.Base(rel), ".") {
			h.write(w, r, rel, b, "no-cache")
			return
		}
		hd.Set("Cache-Control", "no-cache")
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	h.write(w, r, "index.html", h.index, "no-cache")
}

func (h *handler) serveAsset(w http.ResponseWriter, r *http.Request, rel string) {
	b, err := fs.ReadFile(h.files, rel)
	if err != nil {
		w.Header().Set("Cache-Control", "no-cache")
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	// Vite names every asset by a hash of its content: a name never changes meaning.
	h.write(w, r, rel, b, "public, max-age=31536000, immutable")
}

func (h *handler) write(w http.ResponseWriter, r *http.Request, name string, body []byte, cache string) {
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	hd := w.Header()
	hd.Set("Content-Type", ct)
	hd.Set("Cache-Control", cache)
	e := h.encode(name, body, ct)
	if e.gz != nil {
		// API Gateway does not compress: the text goes gzipped to every client that takes it.
		hd.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			hd.Set("Content-Encoding", "gzip")
			hd.Set("ETag", e.gzETag)
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(e.gz))
			return
		}
	}
	hd.Set("ETag", e.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// acceptsGzip reports a request whose Accept-Encoding names gzip (and does not refuse it).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			return strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0"
		}
	}
	return false
}
