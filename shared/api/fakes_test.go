package api_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/images"
)

// fakes are in-memory services behind the real handlers, for tests of the HTTP contract
// (decoding, statuses, envelopes, paging, headers, scopes) that need no feature logic. The
// features have their own tests; e2e tests run the same handlers over the local stack.
type fakes struct {
	mu       sync.Mutex
	keys     map[string]domain.Principal // by secret
	agents   *fakeAgents
	sessions *fakeSessions
	keySvc   *fakeKeys
	images   *fakeImages
}

// fakeBaseURL is the public base of the fakes' /media/ URLs.
const fakeBaseURL = "https://api.example.com/stage"

// newFakeStack is a stack whose groups run over fakes: the same requests, OpenAPI checks and
// helpers as newStack, in milliseconds.
func newFakeStack(t testing.TB) (*stack, *fakes) {
	t.Helper()
	f := &fakes{keys: map[string]domain.Principal{}, agents: &fakeAgents{}, keySvc: &fakeKeys{}, images: &fakeImages{}}
	f.sessions = &fakeSessions{agents: f.agents}
	opts := api.Options{Auth: fakeAuth{f}}
	groups := []struct {
		prefix string
		h      http.Handler
	}{
		{"/api/v1/agent", api.NewAgents(f.agents, opts)},
		{"/api/v1/sessions", api.NewSessions(f.sessions, opts)},
		{"/api/v1/runtime", api.NewRuntime(f.sessions, opts)},
		{"/api/v1/auth", api.NewAuth(f.keySvc, opts)},
		{"/api/v1/api-keys", api.NewAuth(f.keySvc, opts)},
		{"/api/v1/images", api.NewImages(f.images, api.StaticBaseURL(fakeBaseURL+"/"), opts)},
		{"/media", api.NewImages(f.images, api.StaticBaseURL(fakeBaseURL+"/"), opts)},
	}
	meta := api.NewMeta(opts)
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// As API Gateway routes: by path prefix, unclean paths included.
		p := "/" + strings.TrimLeft(r.URL.Path, "/")
		for _, g := range groups {
			if strings.HasPrefix(p, g.prefix) {
				g.h.ServeHTTP(w, r)
				return
			}
		}
		meta.ServeHTTP(w, r)
	})
	return &stack{t: t, mux: mux, fakes: f}, f
}

// key is a key of owner in company with every scope but admin, or as opts change it.
func (f *fakes) key(owner, company string, opts ...func(*auth.NewKey)) string {
	in := auth.NewKey{Name: "test", Owner: owner, Company: company}
	for _, o := range opts {
		o(&in)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	secret := "ak_" + uuid.NewString()
	f.keys[secret] = domain.Principal{KeyID: uuid.NewString(), Owner: in.Owner, Company: in.Company, Scopes: in.Scopes,
		RateLimit: in.RateLimit, ExpiresAt: time.Now().Add(time.Hour)}
	return secret
}

// fakeAuth authenticates the fakes' keys, and "Bearer <key>" as a token of that key; it never
// limits.
type fakeAuth struct{ f *fakes }

func (a fakeAuth) Authenticate(_ context.Context, apiKey, authorization string) (domain.Principal, error) {
	a.f.mu.Lock()
	defer a.f.mu.Unlock()
	if p, ok := a.f.keys[apiKey]; ok && apiKey != "" {
		return p, nil
	}
	if tok, ok := strings.CutPrefix(authorization, "Bearer "); ok && apiKey == "" {
		if p, ok := a.f.keys[tok]; ok {
			p.ViaToken = true
			return p, nil
		}
	}
	return domain.Principal{}, domain.ErrBadKey
}

func (fakeAuth) Limit(context.Context, domain.Principal) (auth.Rate, error) { return auth.Rate{}, nil }

// page is items[offset:offset+limit] and whether more follow.
func page[T any](items []T, offset, limit int) ([]T, bool) {
	if offset >= len(items) {
		return []T{}, false
	}
	end := min(offset+limit, len(items))
	return items[offset:end], end < len(items)
}

// fakeKeys keeps the keys made through the API and what each call was asked.
type fakeKeys struct {
	mu      sync.Mutex
	created []auth.NewKey
	keys    []*domain.APIKey
	revoked []string
}

func (*fakeKeys) IssueToken(context.Context, domain.Principal) (string, time.Duration, error) {
	return "t." + uuid.NewString(), 15 * time.Minute, nil
}

// CreateKeyAs makes the key as asked (a day when no lifetime is given), owned by the caller
// unless another owner is named.
func (k *fakeKeys) CreateKeyAs(_ context.Context, p domain.Principal, in auth.NewKey) (*domain.APIKey, string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.created = append(k.created, in)
	now := time.Now().UTC().Truncate(time.Second)
	expires := in.ExpiresAt
	switch {
	case in.TTL > 0:
		expires = now.Add(in.TTL)
	case expires.IsZero():
		expires = now.Add(24 * time.Hour)
	}
	owner := in.Owner
	if owner == "" {
		owner = p.Owner
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	secret := "ak_" + base64.RawURLEncoding.EncodeToString(b[:])
	key := &domain.APIKey{ID: uuid.NewString(), Name: in.Name, Prefix: secret[:10], Hash: "hash-" + secret, Owner: owner, Company: p.Company,
		ParentID: &p.KeyID, Scopes: append([]string{}, in.Scopes...), RateLimit: in.RateLimit, ExpiresAt: expires, CreatedAt: now}
	k.keys = append(k.keys, key)
	return key, secret, nil
}

func (k *fakeKeys) ListKeysAs(_ context.Context, p domain.Principal) ([]*domain.APIKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []*domain.APIKey
	for _, key := range k.keys {
		if key.Company == p.Company {
			out = append(out, key)
		}
	}
	return out, nil
}

func (k *fakeKeys) RevokeKeyAs(_ context.Context, p domain.Principal, id string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, key := range k.keys {
		if key.ID == id && key.Company == p.Company {
			k.revoked = append(k.revoked, id)
			return nil
		}
	}
	return domain.ErrNotFound
}

// fakeImages keeps uploads in memory by name.
type fakeImages struct {
	mu     sync.Mutex
	stored map[string][]byte
}

func (f *fakeImages) Upload(_ context.Context, data []byte) (*images.Uploaded, error) {
	mt, err := images.Check(data)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stored == nil {
		f.stored = map[string][]byte{}
	}
	name := uuid.NewString() + ".png"
	f.stored[name] = data
	return &images.Uploaded{Name: name, MediaType: mt, Size: len(data)}, nil
}

func (f *fakeImages) Open(_ context.Context, name string) ([]byte, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.stored[name]
	if !ok {
		return nil, "", domain.ErrNotFound
	}
	return data, "image/png", nil
}
