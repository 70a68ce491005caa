package tools

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// blockedPrefixes are the ranges that are not the public internet beyond what netip.Addr's
// own predicates (loopback, private, link-local, multicast, unspecified) catch.
var blockedPrefixes = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a \"this network\" address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved or broadcast address"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible or unspecified address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
}

// Ranges whose addresses embed an IPv4 address, which must itself be public (the local-use NAT64
// range, 64:ff9b:1::/48, is refused whole above).
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// refusal returns why a is not a public unicast address, or "" when it is.
func refusal(a netip.Addr) string {
	if !a.IsValid() {
		return "not an IP address"
	}
	a = a.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address (cloud metadata lives there)"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsMulticast():
		return "a multicast address"
	}
	for _, b := range blockedPrefixes {
		if b.prefix.Contains(a) {
			return b.reason
		}
	}
	if nat64.Contains(a) {
		b := a.As16()
		if r := refusal(netip.AddrFrom4([4]byte(b[12:]))); r != "" {
			return "a NAT64 form of " + r
		}
	}
	if sixToFour.Contains(a) {
		b := a.As16()
		if r := refusal(netip.AddrFrom4([4]byte(b[2:6]))); r != "" {
			return "a 6to4 form of " + r
		}
	}
	return ""
}

// policy decides which destinations http_request may reach.
type policy struct {
	off   bool                      // Options.AllowPrivate
	allow func(netip.AddrPort) bool // Options.allow, an exception list for tests
}

// checkAddr refuses a destination address that is not public.
func (p policy) checkAddr(ap netip.AddrPort) error {
	if p.off || (p.allow != nil && p.allow(ap)) {
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
func (p policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check address %q", ErrForbiddenDestination, address)
	}
	return p.checkAddr(ap)
}

// checkURL refuses what can be refused before any connection: other schemes, credentials in
// the URL, internal host names, numeric hosts in odd notations and literal non-public IPs.
func (p policy) checkURL(u *url.URL) error {
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
	if p.off {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return p.checkAddr(netip.AddrPortFrom(a, port))
	}
	return checkHostName(host)
}

// checkHostName refuses names that point inside the network whatever DNS says, and hosts that
// some resolvers read as IPv4 numbers (2130706433, 0x7f000001, 0177.1, 127.1).
func checkHostName(host string) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	labels := strings.Split(h, ".")
	if last := labels[len(labels)-1]; isNumericLabel(last) {
		return fmt.Errorf("%w: %q is an IP address in a non-standard notation", ErrForbiddenDestination, host)
	}
	switch h {
	case "localhost", "metadata", "metadata.goog", "metadata.google.internal",
		"instance-data", "metadata.azure.internal", "kubernetes.default":
		return fmt.Errorf("%w: %q is an internal host name", ErrForbiddenDestination, host)
	}
	for _, suffix := range []string{".localhost", ".local", ".internal", ".localdomain", ".home.arpa", ".svc", ".cluster.local"} {
		if strings.HasSuffix(h, suffix) {
			return fmt.Errorf("%w: %q is an internal host name", ErrForbiddenDestination, host)
		}
	}
	if !isHostName(h) {
		return fmt.Errorf("%w: %q is not a valid host name (write international names in their xn-- form)", ErrForbiddenDestination, host)
	}
	return nil
}

// isNumericLabel reports a label that URL parsers (WHATWG) take as an IPv4 number: decimal,
// octal or 0x hex. No top-level domain is numeric, so no real name is refused.
func isNumericLabel(s string) bool {
	if s == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(s, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(s, "0123456789") == ""
}

// isHostName reports a DNS name of letters, digits, hyphens and underscores.
func isHostName(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// dialer returns the dialer of the guarded client; resolver nil means the system's.
func (p policy) dialer(timeout time.Duration, resolver *net.Resolver) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: p.control, Resolver: resolver}
}
