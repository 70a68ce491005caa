package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// Route is one method and path an endpoint group serves, written as in the contract
// (trailing slash, {name} parameters).
type Route struct {
	Method string
	Path   string
}

// Authenticator checks credentials and rate limits; auth.Service is the implementation.
type Authenticator interface {
	Authenticate(ctx context.Context, apiKey, authorization string) (domain.Principal, error)
	Limit(ctx context.Context, p domain.Principal) (auth.Rate, error)
}

// Options are what every endpoint group shares.
type Options struct {
	Log          *slog.Logger
	Auth         Authenticator
	MaxBodyBytes int64 // DefaultMaxBodyBytes when zero
}

// Group is the http.Handler of one endpoint group: routing, request ids, panics, the access log,
// authentication and rate limits, with every failure in the error envelope.
type Group struct {
	mux      *http.ServeMux
	routes   []Route
	literals map[string][]string // path without parameters → its methods
	opts     Options
}

type handlerFunc func(w http.ResponseWriter, r *http.Request) error

type ctxKey int

const (
	principalKey ctxKey = iota
	requestIDKey
)

var probeMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

func newGroup(opts Options) *Group {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Group{mux: http.NewServeMux(), literals: map[string][]string{}, opts: opts}
}

// Routes lists the routes the group serves.
func (g *Group) Routes() []Route { return g.routes }

// handle registers h for method and path. Paths are matched with or without their trailing
// slash; public routes skip authentication.
func (g *Group) handle(method, path string, public bool, h handlerFunc) {
	g.routes = append(g.routes, Route{Method: method, Path: path})
	if !strings.Contains(path, "{") {
		g.literals[trimSlash(path)] = append(g.literals[trimSlash(path)], method)
	}
	g.mux.HandleFunc(method+" "+trimSlash(path), func(w http.ResponseWriter, r *http.Request) {
		if !public {
			p, err := g.authorize(w, r)
			if err != nil {
				writeError(w, r, g.opts.Log, err)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), principalKey, p))
		}
		if err := h(w, r); err != nil {
			writeError(w, r, g.opts.Log, err)
		}
	})
}

func (g *Group) authorize(w http.ResponseWriter, r *http.Request) (domain.Principal, error) {
	if g.opts.Auth == nil {
		return domain.Principal{}, domain.ErrBadKey
	}
	p, err := g.opts.Auth.Authenticate(r.Context(), r.Header.Get("x-api-key"), r.Header.Get("Authorization"))
	if err != nil {
		return p, err
	}
	rate, err := g.opts.Auth.Limit(r.Context(), p)
	if rate.Limit > 0 {
		h := w.Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(rate.Limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(rate.Remaining))
		reset := max(int(time.Until(rate.Reset).Seconds()+0.999), 1)
		h.Set("X-RateLimit-Reset", strconv.Itoa(reset))
		// The IETF fields (draft-ietf-httpapi-ratelimit-headers) of the same fixed one-minute
		// window, for clients that read those rather than X-RateLimit-*.
		h.Set("RateLimit-Policy", `"per-key";q=`+strconv.Itoa(rate.Limit)+";w=60")
		h.Set("RateLimit", `"per-key";r=`+strconv.Itoa(rate.Remaining)+";t="+strconv.Itoa(reset))
		if err != nil && domain.KindOf(err) == domain.KindRateLimited {
			h.Set("Retry-After", strconv.Itoa(reset))
		}
	}
	return p, err
}

// ServeHTTP routes the request, answering unknown paths with 404 and known paths with the wrong
// method with 405, both in the envelope.
func (g *Group) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 128 {
		id = newRequestID()
	}
	w.Header().Set("X-Request-Id", id)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if v := recover(); v != nil {
			g.opts.Log.ErrorContext(r.Context(), "panic", "request_id", id, "panic", v)
			if !sw.wrote {
				writeError(sw, r, g.opts.Log, domain.Errorf(domain.KindInternal, "panic"))
			}
		}
		g.opts.Log.InfoContext(r.Context(), "request", "request_id", id, "method", r.Method, "path", r.URL.Path, "status", sw.status, "ms", time.Since(start).Milliseconds())
	}()
	if !canonical(r.URL.Path) {
		// ServeMux would answer with a 307 text/html redirect to the cleaned path; API Gateway
		// routes such paths nowhere, so neither do we.
		writeError(sw, r, g.opts.Log, domain.Errorf(domain.KindNotFound, "No route for %s %s: empty, \".\" and \"..\" path segments are not resolved", r.Method, r.URL.Path))
		return
	}
	r.URL.Path = trimSlash(r.URL.Path)
	r.URL.RawPath = ""
	_, pattern := g.mux.Handler(r)
	// A wildcard match loses to a literal route of another method on the same path
	// (GET /agent/validate/ is the validate route with the wrong method, not agent "validate").
	if pattern != "" && !(strings.Contains(pattern, "{") && g.literals[r.URL.Path] != nil) {
		g.mux.ServeHTTP(sw, r)
		return
	}
	allowed := g.literals[r.URL.Path]
	if allowed == nil {
		for _, m := range probeMethods {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, p := g.mux.Handler(probe); p != "" {
				allowed = append(allowed, m)
			}
		}
	}
	if len(allowed) > 0 {
		sw.Header().Set("Allow", strings.Join(allowed, ", "))
		writeError(sw, r, g.opts.Log, domain.Errorf(domain.KindMethodNotAllowed, "Method %s is not allowed on %s; allowed: %s", r.Method, r.URL.Path+"/", strings.Join(allowed, ", ")))
		return
	}
	writeError(sw, r, g.opts.Log, domain.Errorf(domain.KindNotFound, "No route for %s %s", r.Method, r.URL.Path+"/"))
}

// canonical reports whether p is a clean absolute path, with at most one trailing slash.
func canonical(p string) bool {
	c := path.Clean(p)
	return strings.HasPrefix(p, "/") && (p == c || p == c+"/")
}

func trimSlash(p string) string {
	if len(p) > 1 {
		return strings.TrimRight(p, "/")
	}
	return p
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func requestID(r *http.Request) string {
	id, _ := r.Context().Value(requestIDKey).(string)
	return id
}

// principal is the authenticated caller; handlers on non-public routes always have one.
func principal(r *http.Request) domain.Principal {
	p, _ := r.Context().Value(principalKey).(domain.Principal)
	return p
}

// statusWriter remembers the status for the access log and whether anything was written.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if !s.wrote {
		s.status, s.wrote = http.StatusOK, true
	}
	return s.ResponseWriter.Write(b)
}

// Flush lets streaming handlers flush through the wrapper.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
