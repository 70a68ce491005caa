package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// allowEntry is one entry of an operator's allow-list: a host name or an IP address, and the
// one port it is allowed on.
type allowEntry struct {
	name string     // lower-case host name without a trailing dot; "" for an address
	addr netip.Addr // an IP entry, unmapped; invalid for a name
	port uint16     // 0: any port
}

// ParseAllowList reads an operator's allow-list (MCP_ALLOWED_HOSTS): entries separated by
// commas, spaces around them and empty entries ignored. Each is "host" (any port), "host:port"
// (that port only), an IP address ("10.0.0.5", "::1", "[::1]") or one with a port
// ("10.0.0.5:8080", "[::1]:8080"). It returns the entries as written, trimmed, or an error
// naming every malformed one: a URL, a path, a wildcard, an empty host or a port that is not
// 1 to 65535, which would otherwise allow nothing without a word.
func ParseAllowList(s string) ([]string, error) {
	var out, bad []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if _, err := parseAllowEntry(e); err != nil {
			bad = append(bad, err.Error())
			continue
		}
		out = append(out, e)
	}
	if len(bad) > 0 {
		return nil, errors.New(strings.Join(bad, "; "))
	}
	return out, nil
}

// parseAllowEntry reads one allow-list entry (see ParseAllowList).
func parseAllowEntry(s string) (allowEntry, error) {
	bad := func(why string) (allowEntry, error) {
		return allowEntry{}, fmt.Errorf("allowed host %q: %s", s, why)
	}
	s = strings.TrimSpace(s)
	if strings.Contains(s, "://") {
		return bad("write the host or host:port, not a URL")
	}
	// A bare IPv6 address has colons of its own; with a port it must be bracketed.
	if a, err := netip.ParseAddr(s); err == nil {
		return allowEntry{addr: a.Unmap()}, nil
	}
	host, port := s, ""
	bracketed := strings.HasPrefix(s, "[")
	switch {
	case bracketed && strings.HasSuffix(s, "]"):
		host = s[1 : len(s)-1]
	case bracketed || strings.Contains(s, ":"):
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			return bad("not host, host:port or [IPv6]:port")
		}
		host, port = h, p
	}
	e := allowEntry{}
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return bad(fmt.Sprintf("port %q is not a number from 1 to 65535", port))
		}
		e.port = uint16(n)
	}
	if host == "" {
		return bad("no host")
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if bracketed && !a.Is6() {
			return bad("only IPv6 addresses go in brackets")
		}
		e.addr = a.Unmap()
		return e, nil
	}
	if bracketed {
		return bad(fmt.Sprintf("%q is not an IPv6 address", host))
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	switch {
	case strings.Contains(h, "*"):
		return bad("wildcards are not supported; name each host")
	case !isHostName(h):
		return bad("not a host name or IP address (letters, digits, '-', '_' and dots; no path)")
	case isNumericLabel(h[strings.LastIndexByte(h, '.')+1:]):
		return bad("an IP address in a non-standard notation")
	}
	e.name = h
	return e, nil
}

// matches reports whether host (a URL's Hostname or a dial address's host) on port is the
// entry's host, by name or by address, on its port.
func (e allowEntry) matches(host string, port uint16) bool {
	if e.port != 0 && e.port != port {
		return false
	}
	h := normHost(host)
	if e.addr.IsValid() {
		a, err := netip.ParseAddr(h)
		return err == nil && a.Unmap() == e.addr
	}
	return h == e.name
}
