package mcp

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Redacted replaces a header value in what a server says.
const Redacted = "[redacted]"

// minRedacted is the shortest header value (or part of one) that is redacted: shorter ones
// would blank out ordinary words and are no secret anyway.
const minRedacted = 4

// redactor removes an endpoint's header values from text the server supplies (error messages,
// tool results, tool descriptions) before it leaves the adapter: a server that echoes the
// Authorization header it was sent must not put it into last_error, a tool result or an event.
// It grows as a session goes: an OAuth token renewed in the middle of it (a refresh, a step-up)
// is added before it is sent (add).
type redactor struct {
	mu      sync.RWMutex
	seen    map[string]bool
	secrets []string // longest first, so that a value is replaced before a part of it
}

// newRedactor collects the values of headers (add).
func newRedactor(headers map[string]string) *redactor {
	r := &redactor{seen: map[string]bool{}}
	r.add(slices.Collect(maps.Values(headers))...)
	return r
}

// add collects header values: each value, the part after an auth scheme ("Bearer abc" →
// "abc"), a Basic credential decoded ("user:password" and the password), and the JSON-escaped
// form of each.
func (r *redactor) add(values ...string) {
	var fresh []string
	put := func(s string) {
		s = strings.TrimSpace(s)
		if len(s) < minRedacted || r.seen[s] {
			return
		}
		r.seen[s] = true
		fresh = append(fresh, s)
		if b, err := json.Marshal(s); err == nil {
			if esc := string(b[1 : len(b)-1]); esc != s && !r.seen[esc] {
				r.seen[esc] = true
				fresh = append(fresh, esc)
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		put(v)
		scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
		if !ok {
			continue
		}
		put(cred)
		if strings.EqualFold(scheme, "Basic") {
			if plain, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
				put(string(plain))
				if _, password, ok := strings.Cut(string(plain), ":"); ok {
					put(password)
				}
			}
		}
	}
	if len(fresh) == 0 {
		return
	}
	// A new slice: text and value may still range over the old one.
	secrets := append(slices.Clone(r.secrets), fresh...)
	slices.SortFunc(secrets, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	r.secrets = secrets
}

// list is the values to redact, longest first.
func (r *redactor) list() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.secrets
}

// text is s with every header value replaced by Redacted.
func (r *redactor) text(s string) string {
	if r == nil {
		return s
	}
	for _, secret := range r.list() {
		if strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, Redacted)
		}
	}
	return s
}

// value is v (decoded JSON) with every string, object keys included, passed through text.
func (r *redactor) value(v any) any {
	if r == nil || len(r.list()) == 0 {
		return v
	}
	switch v := v.(type) {
	case string:
		return r.text(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[r.text(k)] = r.value(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = r.value(e)
		}
		return out
	}
	return v
}

// redactedError carries an error whose text is redacted; the error itself stays in the chain.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// err is e with a redacted text, or e when there is nothing to redact.
func (r *redactor) err(e error) error {
	if e == nil || r == nil {
		return e
	}
	msg := e.Error()
	if red := r.text(msg); red != msg {
		return &redactedError{msg: red, err: e}
	}
	return e
}
