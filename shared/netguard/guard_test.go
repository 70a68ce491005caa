package netguard

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

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
