package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// The hooks of this file let a protocol served beside a group's routes (package mcpserve, the
// Model Context Protocol) live in its own package, so that only the functions that serve it link
// its SDK, while it authenticates, limits and reports errors as every route does.

// HandleAuthenticated registers h for method and path as an authenticated route of g: the caller's
// key is checked and rate limited first (Principal tells who it is), and an error h returns is
// written in the error envelope. Besides x-api-key and bearer tokens, the API key itself is
// accepted as the bearer (Authorization: Bearer ak_…), as MCP clients send a static credential:
// a bearer that is not a signed token (which has dots) is taken as a key.
func (g *Group) HandleAuthenticated(method, path string, h func(w http.ResponseWriter, r *http.Request) error) {
	g.handle(method, path, true, func(w http.ResponseWriter, r *http.Request) error {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && r.Header.Get("x-api-key") == "" && !strings.Contains(tok, ".") {
			r.Header.Set("x-api-key", strings.TrimSpace(tok))
			r.Header.Del("Authorization")
		}
		p, err := g.authorize(w, r)
		if err != nil {
			return err
		}
		return h(w, r.WithContext(context.WithValue(r.Context(), principalKey, p)))
	})
}

// Principal is the authenticated caller of a request on an authenticated route.
func Principal(r *http.Request) domain.Principal { return principal(r) }

// MaxExecuteBody is the body limit of a request that may carry an execute's content.
func (g *Group) MaxExecuteBody() int64 { return max(g.opts.MaxBodyBytes, ExecuteMaxBodyBytes) }

// ErrorOf is err as the error envelope tells it (error.type and error.message), logged as a
// failed request is: an internal error is logged with the request id and told generically.
func (g *Group) ErrorOf(r *http.Request, err error) (typ, message string) {
	_, body := envelope(r, g.opts.Log, err)
	return body.Error.Type, body.Error.Message
}

// Detach is the context of a run a request starts, as the execute runs it: the client going away
// cancels neither the run nor its commit, and it stops a margin before the request's deadline.
func Detach(parent context.Context) (context.Context, context.CancelFunc) { return detach(parent) }

// CheckBudget refuses a run of p whose key's or company's monthly budget is spent, as the execute
// route is refused before it reads anything (nil when the authenticator holds no budgets).
func (g *Group) CheckBudget(ctx context.Context, p domain.Principal) error {
	b, ok := g.opts.Auth.(Budgeter)
	if !ok {
		return nil
	}
	_, err := b.CheckBudget(ctx, p)
	return err
}

// ReadBody reads a request's whole body, refusing more than limit bytes with 413 as every route
// does.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	return readBody(w, r, limit)
}

// CitationsView is the citations of a message as results show them (nil when its agent
// retrieved nothing, [] when it searched and found nothing).
func CitationsView(cs []domain.Citation) any {
	if cs == nil {
		return nil
	}
	return citationViews(cs)
}

// SearchView is a knowledge-base search's hits as POST /knowledge-bases/{id}/search/ answers them.
func SearchView(hits []domain.Hit) any { return searchView(hits) }
