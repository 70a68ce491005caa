package mcptest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// OAuth paths, after the server's base.
const (
	PathOAuthMCP = "/protected/mcp" // the MCP endpoint that wants a bearer token
	PathIssuer   = "/as"            // the authorization server's issuer path
)

// OAuthServer is the test server's tools behind OAuth 2.1 as the MCP authorization spec
// (2025-11-25) describes it, with its own authorization server on the same listener: protected
// resource metadata (RFC 9728) at the path of the endpoint, authorization server metadata with
// path insertion (RFC 8414), dynamic registration, the authorization code grant with PKCE S256
// (a redirect at once, no person), client credentials and refresh tokens. It records what
// clients sent, for tests to check. Set the fields before serving.
type OAuthServer struct {
	Base        string        // "http://host:port", set once listening
	Scopes      []string      // the resource's scopes_supported; the 401 asks for the first
	StepUpScope string        // when set, a tools/call needs it too (a 403 insufficient_scope)
	TokenTTL    time.Duration // 0: an hour
	ClientID    string        // a pre-registered client (client_secret_basic or _post)
	Secret      string

	mu        sync.Mutex
	clients   map[string]string // id → secret ("" for a public client)
	codes     map[string]grant
	tokens    map[string]grant // access tokens
	refreshes map[string]grant
	// Authorizations are the authorization requests' queries, TokenRequests the token
	// requests' forms (with "authorization" set to the header), in order.
	Authorizations []url.Values
	TokenRequests  []url.Values
	Registrations  int
	Revoked        bool // every token refused from now on (a revoked grant)
}

type grant struct {
	client, challenge, resource string
	scopes                      []string
	expiry                      time.Time
}

// Handler serves the protected endpoint and the authorization server.
func (o *OAuthServer) Handler() http.Handler {
	o.clients = map[string]string{}
	if o.ClientID != "" {
		o.clients[o.ClientID] = o.Secret
	}
	o.codes, o.tokens, o.refreshes = map[string]grant{}, map[string]grant{}, map[string]grant{}
	srv := NewServer()
	inner := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux := http.NewServeMux()
	mux.Handle(PathOAuthMCP, o.protect(inner))
	mux.HandleFunc("GET /.well-known/oauth-protected-resource"+PathOAuthMCP, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"resource": o.Base + PathOAuthMCP, "authorization_servers": []string{o.Base + PathIssuer},
			"scopes_supported": o.Scopes})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server"+PathIssuer, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"issuer": o.Base + PathIssuer,
			"authorization_endpoint": o.Base + PathIssuer + "/authorize", "token_endpoint": o.Base + PathIssuer + "/token",
			"registration_endpoint": o.Base + PathIssuer + "/register", "code_challenge_methods_supported": []string{"S256"},
			"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token", "client_credentials"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post", "none"}})
	})
	mux.HandleFunc("POST "+PathIssuer+"/register", o.register)
	mux.HandleFunc("GET "+PathIssuer+"/authorize", o.authorize)
	mux.HandleFunc("POST "+PathIssuer+"/token", o.token)
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// protect answers a request without a valid token 401 (naming the metadata and the first
// scope), and a tools/call without StepUpScope 403 insufficient_scope.
func (o *OAuthServer) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		meta := o.Base + "/.well-known/oauth-protected-resource" + PathOAuthMCP
		o.mu.Lock()
		g, ok := o.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		revoked := o.Revoked
		o.mu.Unlock()
		if !ok || revoked || time.Now().After(g.expiry) {
			ch := `Bearer resource_metadata="` + meta + `"`
			if len(o.Scopes) > 0 {
				ch += `, scope="` + o.Scopes[0] + `"`
			}
			w.Header().Set("WWW-Authenticate", ch)
			writeJSON(w, 401, map[string]string{"error": "invalid_token"})
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		_ = json.Unmarshal(body, &msg)
		if msg.Method == "tools/call" && o.StepUpScope != "" && !slices.Contains(g.scopes, o.StepUpScope) {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+strings.Join(append(slices.Clone(o.Scopes[:1]), o.StepUpScope), " ")+
				`", resource_metadata="`+meta+`"`)
			writeJSON(w, 403, map[string]string{"error": "insufficient_scope"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (o *OAuthServer) register(w http.ResponseWriter, r *http.Request) {
	var meta struct {
		AuthMethod string `json:"token_endpoint_auth_method"`
	}
	_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&meta)
	id, secret := "dcr-"+rand.Text(), ""
	if meta.AuthMethod != "none" {
		secret = rand.Text()
	}
	o.mu.Lock()
	o.clients[id] = secret
	o.Registrations++
	o.mu.Unlock()
	writeJSON(w, 201, map[string]any{"client_id": id, "client_secret": secret, "token_endpoint_auth_method": meta.AuthMethod})
}

func (o *OAuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.Authorizations = append(o.Authorizations, q)
	if _, ok := o.clients[q.Get("client_id")]; !ok || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", 400)
		return
	}
	code := rand.Text()
	o.codes[code] = grant{client: q.Get("client_id"), challenge: q.Get("code_challenge"), resource: q.Get("resource"),
		scopes: strings.Fields(q.Get("scope"))}
	to, _ := url.Parse(q.Get("redirect_uri"))
	rq := to.Query()
	rq.Set("code", code)
	rq.Set("state", q.Get("state"))
	to.RawQuery = rq.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

// token serves the three grants; a client authenticates as it registered (basic, post, none).
func (o *OAuthServer) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	f := r.PostForm
	rec := url.Values{}
	for k, v := range f {
		rec[k] = v
	}
	rec.Set("authorization", r.Header.Get("Authorization"))
	o.mu.Lock()
	defer o.mu.Unlock()
	o.TokenRequests = append(o.TokenRequests, rec)
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	if want, ok := o.clients[id]; !ok || want != secret {
		writeJSON(w, 401, map[string]string{"error": "invalid_client"})
		return
	}
	var g grant
	switch f.Get("grant_type") {
	case "authorization_code":
		c, ok := o.codes[f.Get("code")]
		delete(o.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || c.client != id || base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge || c.resource != f.Get("resource") {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		g = c
	case "client_credentials":
		g = grant{client: id, resource: f.Get("resource"), scopes: strings.Fields(f.Get("scope"))}
	case "refresh_token":
		c, ok := o.refreshes[f.Get("refresh_token")]
		if !ok || c.client != id || o.Revoked {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(o.refreshes, f.Get("refresh_token"))
		g = c
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	ttl := o.TokenTTL
	if ttl == 0 {
		ttl = time.Hour
	}
	g.expiry = time.Now().Add(ttl)
	access, refresh := "at-"+rand.Text(), "rt-"+rand.Text()
	o.tokens[access] = g
	out := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(ttl.Seconds()),
		"scope": strings.Join(g.scopes, " ")}
	if f.Get("grant_type") != "client_credentials" {
		o.refreshes[refresh] = g
		out["refresh_token"] = refresh
	}
	writeJSON(w, 200, out)
}

// StartOAuth serves an OAuthServer (a pre-registered client clientID with secret, if given)
// on addr until stop is called or ctx ends; mcpURL is its protected MCP endpoint.
func StartOAuth(ctx context.Context, addr, clientID, secret string) (o *OAuthServer, mcpURL string, stop func(), err error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, "", nil, fmt.Errorf("mcptest: listen %s: %w", addr, err)
	}
	o = &OAuthServer{Base: "http://" + ln.Addr().String(), ClientID: clientID, Secret: secret}
	hs := &http.Server{Handler: o.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln) // ends with Close
	}()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	return o, o.Base + PathOAuthMCP, func() { cancel(); <-done }, nil
}
