package api

import (
	"context"
	"net/http"
	"strings"
)

// HandleAuthenticatedAs is HandleAuthenticated for a protocol whose clients read errors in its
// own shape (package openaiserve, the OpenAI API): every failure of the route, the key's refusal
// and its rate limit among them, is written by fail instead of the error envelope (ErrorOf tells
// its type and words, Status its HTTP status).
func (g *Group) HandleAuthenticatedAs(method, path string, h func(w http.ResponseWriter, r *http.Request) error, fail func(w http.ResponseWriter, r *http.Request, err error)) {
	g.handle(method, path, true, func(w http.ResponseWriter, r *http.Request) error {
		r, err := g.authenticated(w, r)
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			fail(w, r, err)
		}
		return nil
	})
}

// authenticated is r with its caller, checked and rate limited (Principal tells who it is), the
// API key accepted as the bearer as HandleAuthenticated accepts it.
func (g *Group) authenticated(w http.ResponseWriter, r *http.Request) (*http.Request, error) {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && r.Header.Get("x-api-key") == "" && !strings.Contains(tok, ".") {
		r.Header.Set("x-api-key", strings.TrimSpace(tok))
		r.Header.Del("Authorization")
	}
	p, err := g.authorize(w, r)
	if err != nil {
		return r, err
	}
	return r.WithContext(context.WithValue(r.Context(), principalKey, p)), nil
}

// ReadObject reads a request's body as one JSON or YAML object, as every route reads its body
// (the Content-Type decides; 415 for others, 413 over limit, 400 for what is not one object),
// and returns it as JSON (a YAML body converted), for a surface package's own typed decoding.
func ReadObject(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	_, b, err := readObject(w, r, limit)
	return b, err
}
