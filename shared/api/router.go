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
	spends := modelRoutes[Route{Method: method, Path: path}]
	g.mux.HandleFunc(method+" "+trimSlash(path), func(w http.ResponseWriter, r *http.Request) {
		if !public {
			p, err := g.authorize(w, r)
			if err == nil && spends {
				err = g.checkBudget(w, r, p)
			}
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
		// X-RateLimit-* tell the policy with the fewest requests left (the key's or the
		// company's); the IETF fields (draft-ietf-httpapi-ratelimit-headers) list each policy in
		// force, of the same fixed one-minute window.
		h.Set("X-RateLimit-Limit", strconv.Itoa(rate.Limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(rate.Remaining))
		reset := max(int(time.Until(rate.Reset).Seconds()+0.999), 1)
		h.Set("X-RateLimit-Reset", strconv.Itoa(reset))
		quotas := rate.Policies
		if len(quotas) == 0 {
			quotas = []auth.Quota{{Name: auth.PolicyKey, Limit: rate.Limit, Remaining: rate.Remaining}}
		}
		policies := make([]string, len(quotas))
		states := make([]string, len(quotas))
		for i, q := range quotas {
			policies[i] = `"` + q.Name + `";q=` + strconv.Itoa(q.Limit) + ";w=60"
			states[i] = `"` + q.Name + `";r=` + strconv.Itoa(q.Remaining) + ";t=" + strconv.Itoa(reset)
		}
		h.Set("RateLimit-Policy", strings.Join(policies, ", "))
		h.Set("RateLimit", strings.Join(states, ", "))
		if err != nil && domain.KindOf(err) == domain.KindRateLimited {
			h.Set("Retry-After", strconv.Itoa(reset))
		}
	}
	return p, err
}

// modelRoutes are the routes that start model calls: the execute, in every mode (synchronous,
// streamed, queued) and as the answer that resumes a paused execution. A caller whose key or
// company has spent a monthly budget is refused there, before anything else is read.
var modelRoutes = map[Route]bool{
	{Method: http.MethodPost, Path: "/api/v1/runtime/{session_id}/execute/"}: true,
}

// Budgeter is an Authenticator that also holds monthly budgets (auth.Service): CheckBudget
// refuses a principal whose key's or company's budget is spent, with when it resets.
type Budgeter interface {
	CheckBudget(ctx context.Context, p domain.Principal) (time.Time, error)
}

// checkBudget asks the authenticator, when it holds budgets, whether p may start a run; a refusal
// carries Retry-After, the seconds until the budget resets.
func (g *Group) checkBudget(w http.ResponseWriter, r *http.Request, p domain.Principal) error {
	b, ok := g.opts.Auth.(Budgeter)
	if !ok {
		return nil
	}
	reset, err := b.CheckBudget(r.Context(), p)
	if err != nil && domain.KindOf(err) == domain.KindRateLimited {
		w.Header().Set("Retry-After", strconv.Itoa(max(int(time.Until(reset).Seconds()+0.999), 1)))
	}
	return err
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
