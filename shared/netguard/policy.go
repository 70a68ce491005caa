package netguard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MaxRedirects is how many redirects a guarded client follows, each one checked like the first URL.
const MaxRedirects = 5

// Policy decides which destinations outbound requests may reach. The zero value is the
// production setting: public unicast addresses only.
type Policy struct {
	// AllowPrivate turns the guard off (URL syntax is still checked). For tests against local
	// servers only.
	AllowPrivate bool
	// AllowHosts are the hosts an operator allows to be internal, as ParseAllowList reads them:
	// "host" on any port, "host:port" on that port only, IP addresses alike ("127.0.0.1",
	// "::1", "[::1]:8080"). A URL whose host is exactly one of them (case and a trailing dot
	// aside; an IP as the same address) on an allowed port may resolve to any address. Every
	// other host or port keeps the full guard, at dial time too, so a public name that resolves
	// to 127.0.0.1 stays refused. A malformed entry allows nothing.
	AllowHosts []string
	// AllowAddr, when set, admits dialled addresses the guard refuses, so a test can treat one
	// local server as public while every other local address stays refused.
	AllowAddr func(netip.AddrPort) bool
	// Resolver replaces the system resolver of the guarded transport (tests); nil means the system's.
	Resolver *net.Resolver
}

// allowsHost reports whether host (a URL's Hostname or a dial address's host) on port is one
// the operator allowed.
func (p Policy) allowsHost(host string, port uint16) bool {
	if host == "" {
		return false
	}
	for _, allowed := range p.AllowHosts {
		if e, err := parseAllowEntry(allowed); err == nil && e.matches(host, port) {
			return true
		}
	}
	return false
}

// normHost lower-cases a host and drops IPv6 brackets and a trailing dot.
func normHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(h, ".")
}

// checkAddr refuses a destination address that is not public.
func (p Policy) checkAddr(ap netip.AddrPort) error {
	if p.AllowPrivate || (p.AllowAddr != nil && p.AllowAddr(ap)) {
		return nil
	}
	if r := refusal(ap.Addr()); r != "" {
		return fmt.Errorf("%w: %s is %s", ErrForbiddenDestination, ap.Addr().Unmap(), r)
	}
	return nil
}

// control runs on every connection the guarded dialer makes, after DNS resolution and before
// connecting, so it sees the address actually dialled: this covers DNS rebinding, every
// redirect and each address a name resolves to.
func (p Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check address %q", ErrForbiddenDestination, address)
	}
	return p.checkAddr(ap)
}

// CheckURL refuses what can be refused before any connection: other schemes, credentials in
// the URL, internal host names, numeric hosts in odd notations and literal non-public IPs.
// A host in AllowHosts on an allowed port passes the host checks.
func (p Policy) CheckURL(u *url.URL) error {
	switch u.Scheme {
	case "http", "https":
	default:
		return fmt.Errorf("%w: scheme %q is not allowed; use http or https", ErrForbiddenDestination, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("%w: credentials in the URL are not allowed", ErrForbiddenDestination)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: the URL has no host", ErrForbiddenDestination)
	}
	port := uint16(80)
	if u.Scheme == "https" {
		port = 443
	}
	if s := u.Port(); s != "" {
		n, err := strconv.ParseUint(s, 10, 16)
		if err != nil || n == 0 {
			return fmt.Errorf("%w: invalid port %q", ErrForbiddenDestination, s)
		}
		port = uint16(n)
	}
	if p.AllowPrivate || p.allowsHost(host, port) {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return p.checkAddr(netip.AddrPortFrom(a, port))
	}
	return checkHostName(host)
}

// CheckRedirect is an http.Client's CheckRedirect under the policy: at most MaxRedirects, each
// target checked by CheckURL (its resolved address is checked when dialled).
func (p Policy) CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", MaxRedirects)
	}
	if err := p.CheckURL(req.URL); err != nil {
		return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
	}
	return nil
}

// DialContext dials addr ("host:port") for a guarded transport: a host and port in AllowHosts
// is dialled as is, anything else only at public addresses, checked after resolution.
func (p Policy) DialContext(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	guarded := &net.Dialer{Timeout: timeout, Control: p.control, Resolver: p.Resolver}
	open := &net.Dialer{Timeout: timeout, Resolver: p.Resolver}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, port, err := net.SplitHostPort(addr); err == nil {
			if n, err := strconv.ParseUint(port, 10, 16); err == nil && p.allowsHost(host, uint16(n)) {
				return open.DialContext(ctx, network, addr)
			}
		}
		return guarded.DialContext(ctx, network, addr)
	}
}

// Transport returns an HTTP transport that dials only what the policy allows; timeout bounds
// the dial and the TLS handshake. It never uses a proxy, which would hide the real destination
// from the guard.
func (p Policy) Transport(timeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            p.DialContext(timeout),
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
	}
}

// Client returns an HTTP client on Transport(timeout) whose redirects are checked by
// CheckRedirect. It sets no overall timeout: callers bound requests with their context, so
// that long-lived streams stay possible.
func (p Policy) Client(timeout time.Duration) *http.Client {
	return &http.Client{Transport: p.Transport(timeout), CheckRedirect: p.CheckRedirect}
}
