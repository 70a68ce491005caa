package mcpservers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// A registered server behind OAuth in use: its endpoint carries the stored grant, which renews
// its token as it goes and says when only a person can (errAuthRequired).

// endpoint is how to reach srv with the given headers, and its stored OAuth grant (persist:
// renewed tokens are stored on the record).
func (s *Service) endpoint(ctx context.Context, srv *domain.MCPServer, headers map[string]string, persist bool) (domain.MCPEndpoint, error) {
	ep := endpoint(srv, headers)
	if srv.Auth == nil || s.oauth == nil {
		return ep, nil
	}
	g, err := s.openGrant(ctx, srv)
	if err != nil {
		return ep, err
	}
	ep.Auth = &storedAuth{s: s, srv: srv, g: g, persist: persist}
	return ep, nil
}

// storedAuth is the domain.MCPAuth of a registered server: its stored token, refreshed (and
// stored again) when it has expired; client credentials asked again, with more scope when the
// server asks for it. What a person must cure fails with errAuthRequired.
type storedAuth struct {
	s       *Service
	mu      sync.Mutex
	srv     *domain.MCPServer // as last stored: its SealedAuth is the grant g was read from (or stored as)
	g       *grant
	persist bool // store renewed tokens (false: the caller stores the record, with g)
	renewed bool // g holds a token renewed since it was opened
	tries   int
}

var _ domain.MCPAuth = (*storedAuth)(nil)

func (a *storedAuth) Token(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.g.Token == nil {
		return "", nil
	}
	if a.g.Token.Expired(a.s.now()) {
		if err := a.renew(ctx, nil); err != nil {
			return "", err
		}
	}
	return a.g.Token.Access, nil
}

func (a *storedAuth) Authorize(ctx context.Context, c domain.MCPChallenge) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tries++; a.tries > maxAuthorizations {
		return authRequired("the server refused %d tokens in a row; authorize it again", maxAuthorizations)
	}
	switch {
	case a.srv.Auth.Grant == domain.MCPGrantClientCredentials:
		var held []string
		if a.g.Token != nil {
			held = a.g.Token.Scopes
		}
		return a.renew(ctx, domain.MCPScopes(c, a.g.Server, held, false))
	case a.g.Token == nil:
		return authRequired("the server has not been authorized yet: start an authorization (POST /api/v1/mcp-servers/%s/authorize/)", a.srv.ID)
	case c.Error == domain.MCPInsufficientScope:
		return authRequired("the server asks for more scope (%s); authorize it again", strings.Join(c.Scopes, " "))
	case c.Status == 401 && a.g.Token.Refresh != "" && a.tries == 1:
		return a.renew(ctx, nil)
	}
	return authRequired("the server refused the token; authorize it again")
}

// renew gets a new token (client credentials for scopes, or a refresh) and stores it.
func (a *storedAuth) renew(ctx context.Context, scopes []string) error {
	var tok *domain.MCPToken
	var err error
	if a.srv.Auth.Grant == domain.MCPGrantClientCredentials {
		if len(scopes) == 0 && a.g.Token != nil {
			scopes = a.g.Token.Scopes
		}
		if len(a.srv.Auth.Scopes) > 0 && len(scopes) == 0 {
			scopes = a.srv.Auth.Scopes
		}
		tok, err = a.s.oauth.ClientCredentials(ctx, a.g.Server, a.g.Client, scopes)
	} else {
		tok, err = a.s.oauth.Refresh(ctx, a.g.Server, a.g.Client, a.g.Token)
		if err != nil && a.g.Token != nil && a.g.Token.Refresh != "" && a.storedElsewhere(ctx) {
			return nil // another process refreshed first: its token is the one to use
		}
	}
	if err != nil {
		var me *domain.MCPError
		reason := "the token could not be renewed"
		if errors.As(err, &me) {
			reason = me.Reason
		}
		return &domain.MCPError{Reason: reason + "; authorize the server again", Err: errors.Join(errAuthRequired, err)}
	}
	a.g.Token, a.renewed = tok, true
	if a.persist {
		a.store(ctx)
	}
	return nil
}

// store writes the renewed grant on the record, only over the grant it was renewed from: the
// write is conditional on the record (UpdatedAt), and a record changed meanwhile is read again
// and written once more only if its sealed grant is still the one renewed from (another
// change, such as a status, must not lose a rotated refresh token). A grant stored meanwhile by
// another process (its own refresh, a new authorization) stands: this token then stays in this
// connection only, as it does when the write fails.
func (a *storedAuth) store(ctx context.Context) {
	for range 2 {
		next := *a.srv
		auth := *a.srv.Auth
		next.Auth = &auth
		if a.s.sealGrant(ctx, &next, a.g) != nil {
			return
		}
		next.UpdatedAt = a.s.later(a.srv.UpdatedAt)
		err := a.s.store.UpdateMCPServer(ctx, &next, a.srv)
		if err == nil {
			a.srv = &next
			return
		}
		if domain.KindOf(err) != domain.KindConflict {
			return
		}
		cur, err := a.current(ctx)
		if err != nil || cur.Auth == nil || !bytes.Equal(cur.SealedAuth, a.srv.SealedAuth) {
			return
		}
		a.srv = cur
	}
}

// storedElsewhere is true when, a refresh having failed, the record holds a grant stored since
// a.g was read, whose token a.g then takes: two processes that refresh the same rotating
// refresh token at once each see the other's success as an invalid_grant, and the one refused
// must use the winner's tokens rather than send a person to authorize again. The record is read
// again a few times over about a second, as the winner may not have stored its tokens yet.
// Only a failed refresh reads; a use without one costs nothing more.
func (a *storedAuth) storedElsewhere(ctx context.Context) bool {
	wait := 50 * time.Millisecond
	for i := range 5 {
		if i > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return false
			case <-t.C:
			}
			wait *= 2
		}
		cur, err := a.current(ctx)
		if err != nil || cur.Auth == nil {
			return false
		}
		if bytes.Equal(cur.SealedAuth, a.srv.SealedAuth) {
			continue
		}
		g, err := a.s.openGrant(ctx, cur)
		if err != nil || g.Token == nil || g.Token.Access == "" {
			return false
		}
		a.srv, a.g, a.renewed = cur, g, true
		return true
	}
	return false
}

// current reads the record as stored now (strongly consistent: it follows another's write).
func (a *storedAuth) current(ctx context.Context) (*domain.MCPServer, error) {
	found, err := a.s.store.FindMCPServers(ctx, a.srv.Company, []string{a.srv.ID})
	if err != nil {
		return nil, err
	}
	if len(found) != 1 {
		return nil, domain.ErrNotFound
	}
	return found[0], nil
}

// authRequired is the failure of a server a person must authorize (again).
func authRequired(format string, args ...any) error {
	return &domain.MCPError{Reason: fmt.Sprintf(format, args...), Err: errAuthRequired}
}
