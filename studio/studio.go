// Package studio serves the studio, the web interface over the public API, from the files its
// Vite build wrote into dist/ (embedded: `make build-studio` builds them, they are not
// committed). It is static: the studio talks to the API with the user's own credentials, like
// any other client, so this package adds no endpoint and knows nothing of the API.
package studio

import (
	"bytes"
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
	sum := sha256.Sum256(body)
	hd.Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}
