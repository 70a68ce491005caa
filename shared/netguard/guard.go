// Package netguard is the address guard of every outbound request the service makes on a user's
// behalf (the http_request tool, downloads of user URLs, MCP servers): public unicast addresses
// only, checked on the URL, on every redirect and on the address actually dialled after DNS
// resolution, so that a public name resolving to an internal address (DNS rebinding) is refused.
// An operator may name hosts that are allowed to be internal (Policy.AllowHosts).
package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrForbiddenDestination marks a request to an address the policy refuses; every refusal wraps it.
var ErrForbiddenDestination = errors.New("destination not allowed")

// blockedPrefixes are the ranges that are not the public internet beyond what netip.Addr's
// own predicates (loopback, private, link-local, multicast, unspecified) catch. The IPv6 ones
// that carry an IPv4 address (IPv4-compatible, IPv4-translated, local-use NAT64, Teredo) are
// refused whole: none is routed on the internet, so none is a destination a user may name,
// whatever IPv4 address it embeds.
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
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "an IPv4-translated address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
}

var (
	// globalUnicast is the only IPv6 range the internet routes (RFC 4291; IANA allocates from
	// it alone); NAT64's well-known prefix lies outside it and is checked by its IPv4 address.
	globalUnicast = netip.MustParsePrefix("2000::/3")
	// Ranges whose addresses embed an IPv4 address that a translator or tunnel delivers to:
	// an address there is refused when its IPv4 address is.
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// refusal returns why a is not a public unicast address, or "" when it is.
func refusal(a netip.Addr) string {
	if !a.IsValid() {
		return "not an IP address"
	}
	a = a.Unmap() // IPv4-mapped (::ffff:0:0/96): ::ffff:127.0.0.1 is 127.0.0.1
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
	if a.Is4() {
		return ""
	}
	if form, v4, ok := embeddedIPv4(a); ok {
		if r := refusal(v4); r != "" {
			return form + " form of " + r
		}
	}
	if !globalUnicast.Contains(a) && !nat64.Contains(a) {
		return "an IPv6 address outside the global unicast range 2000::/3"
	}
	return ""
}

// embeddedIPv4 returns the IPv4 address a NAT64 (64:ff9b::/96, last 32 bits), 6to4
// (2002::/16, bits 16-48) or ISATAP (interface identifier 0:5efe or 200:5efe, last 32 bits)
// address carries, and the form's name with its article.
func embeddedIPv4(a netip.Addr) (form string, v4 netip.Addr, ok bool) {
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return "a NAT64", netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return "a 6to4", netip.AddrFrom4([4]byte(b[2:6])), true
	case (b[8] == 0 || b[8] == 2) && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe:
		return "an ISATAP", netip.AddrFrom4([4]byte(b[12:16])), true
	}
	return "", netip.Addr{}, false
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
