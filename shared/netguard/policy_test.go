package netguard

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/netguard/netguardtest"
)

func TestCheckURLAllowHosts(t *testing.T) {
	p := Policy{AllowHosts: []string{"localhost", "127.0.0.1", "[::1]", "Dev.Example."}}
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://localhost:8080/mcp", true},
		{"http://LOCALHOST./mcp", true},
		{"http://127.0.0.1:3001/", true},
		{"http://[::1]:3001/", true},
		{"http://[0:0::1]:3001/", true}, // the same address spelled otherwise
		{"https://dev.example/", true},
		{"http://app.localhost/", false},
		{"http://127.0.0.2/", false},
		{"http://2130706433/", false}, // 127.0.0.1 in another notation is not the allowed host
		{"http://10.0.0.1/", false},
		{"http://169.254.169.254/", false},
		{"ftp://localhost/", false},
		{"http://user:pw@localhost/", false},
		{"http://localhost:0/", false},
		{"https://example.com/", true},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		err = p.CheckURL(u)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrForbiddenDestination) {
			t.Errorf("CheckURL(%s) = %v, want allowed %v", tc.url, err, tc.ok)
		}
	}
	if err := (Policy{}).CheckURL(&url.URL{Scheme: "http", Host: "localhost"}); !errors.Is(err, ErrForbiddenDestination) {
		t.Errorf("localhost with no allow-list = %v, want refused", err)
	}
}

// TestCheckURLAllowHostPorts: a host:port entry admits its host on that port only (the
// scheme's default port when the URL names none); every other port gets the full guard.
func TestCheckURLAllowHostPorts(t *testing.T) {
	p := Policy{AllowHosts: []string{"localhost:8080", "127.0.0.1:3001", "[::1]:8080", "mcp.internal:443", "10.0.0.5"}}
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://localhost:8080/mcp", true},
		{"http://LOCALHOST.:8080/mcp", true},
		{"http://localhost:8081/mcp", false},
		{"http://localhost/mcp", false},
		{"https://localhost/mcp", false},
		{"http://127.0.0.1:3001/", true},
		{"http://127.0.0.1:3002/", false},
		{"http://[::ffff:127.0.0.1]:3001/", true}, // the same address spelled otherwise
		{"http://[::1]:8080/", true},
		{"http://[0:0::1]:8080/", true},
		{"http://[::1]:8081/", false},
		{"https://mcp.internal/", true}, // 443 by default
		{"https://mcp.internal:443/", true},
		{"http://mcp.internal/", false}, // 80
		{"https://mcp.internal:8443/", false},
		{"http://10.0.0.5:1/", true}, // a bare entry: any port
		{"http://10.0.0.5:65535/", true},
		{"http://10.0.0.6/", false},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		err = p.CheckURL(u)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrForbiddenDestination) {
			t.Errorf("CheckURL(%s) = %v, want allowed %v", tc.url, err, tc.ok)
		}
	}
	// A malformed entry, set in code rather than read by ParseAllowList, allows nothing.
	bad := Policy{AllowHosts: []string{"http://localhost", "localhost:abc", ":8080"}}
	for _, raw := range []string{"http://localhost/", "http://localhost:8080/"} {
		u, _ := url.Parse(raw)
		if err := bad.CheckURL(u); !errors.Is(err, ErrForbiddenDestination) {
			t.Errorf("malformed entries, CheckURL(%s) = %v, want refused", raw, err)
		}
	}
}

// get requests raw through the policy's client and returns the body or the error.
func get(t *testing.T, p Policy, raw string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(raw)
	if err := p.CheckURL(u); err != nil {
		return "", err
	}
	resp, err := p.Client(time.Second).Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestClientAllowHostPortOnlyThatPort: with "name:port" allowed, the client reaches the
// allowed server and no other port of the same host: not by URL, not by a redirect, and not by
// a public-looking name that resolves there (refused when dialled).
func TestClientAllowHostPortOnlyThatPort(t *testing.T) {
	var hitsB atomic.Int64
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hitsB.Add(1)
		_, _ = io.WriteString(w, "b")
	}))
	defer b.Close()
	portB := strings.TrimPrefix(b.URL, "http://127.0.0.1:")
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/to-b" {
			http.Redirect(w, r, "http://"+r.URL.Query().Get("host")+":"+portB+"/", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "a")
	}))
	defer a.Close()
	portA := strings.TrimPrefix(a.URL, "http://127.0.0.1:")
	resolver := netguardtest.Resolver(map[string]netip.Addr{
		"localhost":    netip.MustParseAddr("127.0.0.1"),
		"mcp.dev.test": netip.MustParseAddr("127.0.0.1"),
	})
	allow, err := ParseAllowList("localhost:" + portA + ", mcp.dev.test:" + portA + ", 127.0.0.1:" + portA)
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{AllowHosts: allow, Resolver: resolver}
	for _, host := range []string{"localhost", "mcp.dev.test", "127.0.0.1"} {
		if got, err := get(t, p, "http://"+host+":"+portA+"/"); err != nil || got != "a" {
			t.Errorf("%s on the allowed port = %q, %v; want a", host, got, err)
		}
		for _, raw := range []string{
			"http://" + host + ":" + portB + "/",
			"http://" + host + ":" + portA + "/to-b?host=" + host,
		} {
			if got, err := get(t, p, raw); !errors.Is(err, ErrForbiddenDestination) {
				t.Errorf("%s: %q, %v; want ErrForbiddenDestination", raw, got, err)
			}
		}
	}
	if n := hitsB.Load(); n != 0 {
		t.Errorf("the server on the other port was reached %d times, want 0", n)
	}
	// The same list with bare hosts reaches both ports: the port is what refused above.
	bare := Policy{AllowHosts: []string{"localhost", "mcp.dev.test", "127.0.0.1"}, Resolver: resolver}
	for _, host := range []string{"localhost", "mcp.dev.test", "127.0.0.1"} {
		if got, err := get(t, bare, "http://"+host+":"+portB+"/"); err != nil || got != "b" {
			t.Errorf("bare %s on another port = %q, %v; want b", host, got, err)
		}
	}
}

func TestClientAllowHostsAtDialTime(t *testing.T) {
	var hits atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/to-rebind":
			http.Redirect(w, r, "http://rebind.test:"+r.URL.Port()+"/", http.StatusFound)
		case "/to-private":
			http.Redirect(w, r, "http://10.0.0.1/", http.StatusFound)
		default:
			_, _ = io.WriteString(w, "ok")
		}
	}))
	defer s.Close()
	port := strings.TrimPrefix(s.URL, "http://127.0.0.1:")
	resolver := netguardtest.Resolver(map[string]netip.Addr{
		"rebind.test": netip.MustParseAddr("127.0.0.1"),
		"localhost":   netip.MustParseAddr("127.0.0.1"),
	})
	p := Policy{AllowHosts: []string{"localhost"}, Resolver: resolver}

	if got, err := get(t, p, "http://localhost:"+port+"/"); err != nil || got != "ok" {
		t.Errorf("allowed localhost = %q, %v; want ok", got, err)
	}
	// The allow-list is by name: the same address under another name or as a literal stays refused.
	for _, raw := range []string{
		"http://rebind.test:" + port + "/",
		"http://127.0.0.1:" + port + "/",
		"http://localhost:" + port + "/to-private",
	} {
		if _, err := get(t, p, raw); !errors.Is(err, ErrForbiddenDestination) {
			t.Errorf("%s: %v, want ErrForbiddenDestination", raw, err)
		}
	}
	hitsBefore := hits.Load()
	_, err := get(t, p, "http://localhost:"+port+"/to-rebind")
	if !errors.Is(err, ErrForbiddenDestination) || !strings.Contains(err.Error(), "127.0.0.1 is a loopback address") {
		t.Errorf("redirect to a rebinding name: %v, want refused at dial time", err)
	}
	if hits.Load() != hitsBefore+1 {
		t.Errorf("server hits %d after the rebinding redirect, want %d (the redirect target never reached)", hits.Load(), hitsBefore+1)
	}
	// Without the allow-list, localhost is refused before any connection.
	if _, err := get(t, Policy{Resolver: resolver}, "http://localhost:"+port+"/"); !errors.Is(err, ErrForbiddenDestination) {
		t.Errorf("localhost without allow-list: %v, want refused", err)
	}
}
