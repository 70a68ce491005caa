package netguard

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/netguard/netguardtest"
)

func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string // "" for a public address
	}{
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"93.184.216.34", ""},
		{"172.32.0.1", ""},
		{"100.128.0.1", ""},
		{"2606:4700:4700::1111", ""},
		{"64:ff9b::808:808", ""}, // NAT64 of 8.8.8.8
		{"::ffff:8.8.8.8", ""},
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"10.0.0.1", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd00:ec2::254", "private"}, // AWS IMDS over IPv6
		{"169.254.169.254", "link-local"},
		{"169.254.0.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"100.100.100.200", "carrier-grade NAT"}, // Alibaba Cloud metadata
		{"100.127.255.255", "carrier-grade NAT"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "this network"},
		{"::", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"240.0.0.1", "reserved"},
		{"192.0.2.1", "documentation"},
		{"198.18.0.1", "benchmarking"},
		{"fec0::1", "site-local"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:169.254.169.254", "link-local"},
		{"::ffff:10.0.0.1", "private"},
		{"::127.0.0.1", "IPv4-compatible"},
		{"64:ff9b::7f00:1", "NAT64 form of a loopback"},
		{"64:ff9b::a9fe:a9fe", "NAT64 form of a link-local"},
		{"64:ff9b:1::1", "local-use NAT64"},
		{"2002:7f00:1::", "6to4 form of a loopback"},
		{"2002:a9fe:a9fe::1", "6to4 form of a link-local"},
	} {
		got := refusal(netip.MustParseAddr(tc.addr))
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("refusal(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

// TestRefusalEmbeddedIPv4: every IPv6 form that carries an IPv4 address is refused when that
// address would be (NAT64's well-known prefix, 6to4, ISATAP), or whole where the form is never
// routed on the internet (IPv4-compatible, IPv4-translated, local-use NAT64, Teredo); each
// form is checked as a literal URL host, as an address dialled and as a DNS answer.
func TestRefusalEmbeddedIPv4(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string // "" for a public address
	}{
		// IPv4-mapped, ::ffff:0:0/96: the IPv4 address itself.
		{"::ffff:7f00:1", "a loopback address"},
		{"::ffff:a9fe:a9fe", "a link-local address"},
		{"::ffff:a00:1", "a private address"},
		{"::ffff:808:808", ""},
		// IPv4-translated, ::ffff:0:0:0/96 (SIIT): refused whole.
		{"::ffff:0:7f00:1", "an IPv4-translated address"},
		{"::ffff:0:a9fe:a9fe", "an IPv4-translated address"},
		{"::ffff:0:808:808", "an IPv4-translated address"},
		// IPv4-compatible, ::/96 (deprecated): refused whole.
		{"::7f00:1", "an IPv4-compatible"},
		{"::a9fe:a9fe", "an IPv4-compatible"},
		{"::808:808", "an IPv4-compatible"},
		// NAT64 well-known prefix, 64:ff9b::/96: the embedded address decides.
		{"64:ff9b::7f00:1", "a NAT64 form of a loopback address"},
		{"64:ff9b::a9fe:a9fe", "a NAT64 form of a link-local address"},
		{"64:ff9b::a00:1", "a NAT64 form of a private address"},
		{"64:ff9b::6440:1", "a NAT64 form of a carrier-grade NAT address"},
		{"64:ff9b::808:808", ""},
		// Local-use NAT64, 64:ff9b:1::/48: refused whole (its IPv4 may sit at several offsets).
		{"64:ff9b:1::7f00:1", "a local-use NAT64 address"},
		{"64:ff9b:1:7f00:1::", "a local-use NAT64 address"},
		{"64:ff9b:1::808:808", "a local-use NAT64 address"},
		// 6to4, 2002::/16: bits 16-48 decide.
		{"2002:7f00:1::", "a 6to4 form of a loopback address"},
		{"2002:7f00:1::1", "a 6to4 form of a loopback address"},
		{"2002:a9fe:a9fe::", "a 6to4 form of a link-local address"},
		{"2002:c0a8:101::1", "a 6to4 form of a private address"},
		{"2002:808:808::1", ""},
		// Teredo, 2001::/32 (client IPv4 obfuscated in the last 32 bits): refused whole.
		{"2001::7f00:1", "a Teredo address"},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "a Teredo address"}, // client 127.0.0.1
		// ISATAP interface identifiers (0:5efe and 200:5efe) under a global prefix.
		{"2001:4860::5efe:7f00:1", "an ISATAP form of a loopback address"},
		{"2001:4860::200:5efe:a9fe:a9fe", "an ISATAP form of a link-local address"},
		{"2001:4860::5efe:808:808", ""},
		// Outside 2000::/3 nothing is routed, whatever it embeds.
		{"::1:0:7f00:1", "outside the global unicast range"},
		{"4000::7f00:1", "outside the global unicast range"},
		{"4000::5efe:808:808", "outside the global unicast range"},
	} {
		got := refusal(netip.MustParseAddr(tc.addr))
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("refusal(%s) = %q, want %q", tc.addr, got, tc.want)
			continue
		}
		u := &url.URL{Scheme: "http", Host: "[" + tc.addr + "]", Path: "/"}
		if err := (Policy{}).CheckURL(u); (err == nil) != (tc.want == "") || err != nil && !errors.Is(err, ErrForbiddenDestination) {
			t.Errorf("CheckURL(%s) = %v, want refused %v", u, err, tc.want != "")
		}
		if err := (Policy{}).control("tcp6", "["+tc.addr+"]:80", nil); (err == nil) != (tc.want == "") {
			t.Errorf("control([%s]:80) = %v, want refused %v", tc.addr, err, tc.want != "")
		}
	}
}

// TestDialRefusesEmbeddedIPv4Answers: a public-looking name whose AAAA answer embeds a
// loopback IPv4 address is refused when dialled, before any connection.
func TestDialRefusesEmbeddedIPv4Answers(t *testing.T) {
	hosts := map[string]netip.Addr{}
	for i, a := range []string{"::ffff:0:7f00:1", "::ffff:7f00:1", "::7f00:1", "64:ff9b::7f00:1", "2002:7f00:1::", "64:ff9b:1::7f00:1", "2001::7f00:1"} {
		hosts[fmt.Sprintf("v6-%d.test", i)] = netip.MustParseAddr(a)
	}
	dial := Policy{Resolver: netguardtest.Resolver(hosts)}.DialContext(time.Second)
	for name, a := range hosts {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := dial(ctx, "tcp", name+":80")
		cancel()
		if err == nil {
			_ = conn.Close()
		}
		if !errors.Is(err, ErrForbiddenDestination) {
			t.Errorf("dial %s (AAAA %s) = %v, want ErrForbiddenDestination", name, a, err)
		}
	}
}

func TestPolicyAllowException(t *testing.T) {
	srv := netip.MustParseAddrPort("127.0.0.1:8080")
	p := Policy{AllowAddr: func(ap netip.AddrPort) bool { return ap == srv }}
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:8080", true},
		{"127.0.0.1:8081", false},
		{"[::1]:8080", false},
		{"8.8.8.8:53", true},
	} {
		err := p.checkAddr(netip.MustParseAddrPort(tc.addr))
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrForbiddenDestination) {
			t.Errorf("checkAddr(%s) = %v, want allowed %v", tc.addr, err, tc.ok)
		}
	}
	if err := p.control("tcp", "not-an-address", nil); !errors.Is(err, ErrForbiddenDestination) {
		t.Errorf("control of an unparsable address = %v, want refused", err)
	}
	if err := (Policy{AllowPrivate: true}).checkAddr(netip.MustParseAddrPort("127.0.0.1:1")); err != nil {
		t.Errorf("AllowPrivate still refuses loopback: %v", err)
	}
}

func TestFakeResolver(t *testing.T) {
	r := netguardtest.Resolver(map[string]netip.Addr{"rebind.test": netip.MustParseAddr("127.0.0.1")})
	got, err := r.LookupNetIP(context.Background(), "ip4", "rebind.test")
	if err != nil || len(got) != 1 || got[0] != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("LookupNetIP = %v, %v", got, err)
	}
}
