package netguard

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseAllowList: host, host:port, IP and [IPv6]:port entries are read; a malformed entry
// fails the whole list with an error naming it (and every other malformed one).
func TestParseAllowList(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		wantErr []string // substrings of the error; nil: no error
	}{
		{in: "", want: nil},
		{in: " , ,", want: nil},
		{in: "localhost,127.0.0.1,::1", want: []string{"localhost", "127.0.0.1", "::1"}},
		{in: " mcp.internal , 10.0.0.5,,", want: []string{"mcp.internal", "10.0.0.5"}},
		{in: "mcp.internal:8080,10.0.0.5:443,[::1]:8080,[::1],Dev.Example.", want: []string{"mcp.internal:8080", "10.0.0.5:443", "[::1]:8080", "[::1]", "Dev.Example."}},
		{in: "http://x", wantErr: []string{`"http://x"`, "not a URL"}},
		{in: "x:abc", wantErr: []string{`"x:abc"`, "port"}},
		{in: "x:0", wantErr: []string{`"x:0"`, "port"}},
		{in: "x:65536", wantErr: []string{`"x:65536"`, "port"}},
		{in: ":80", wantErr: []string{`":80"`, "no host"}},
		{in: "x/y", wantErr: []string{`"x/y"`, "not a host name"}},
		{in: "*.example.com", wantErr: []string{`"*.example.com"`, "wildcard"}},
		{in: "a b", wantErr: []string{`"a b"`}},
		{in: "[127.0.0.1]:80", wantErr: []string{`"[127.0.0.1]:80"`, "IPv6"}},
		{in: "[mcp.internal]:80", wantErr: []string{`"[mcp.internal]:80"`, "IPv6"}},
		{in: "::1:8080:x", wantErr: []string{`"::1:8080:x"`}},
		{in: "2130706433", wantErr: []string{`"2130706433"`, "non-standard"}},
		{in: "127.1:80", wantErr: []string{`"127.1:80"`, "non-standard"}},
		{in: "localhost, x:abc, ok.test, x/y", wantErr: []string{`"x:abc"`, `"x/y"`}},
	} {
		got, err := ParseAllowList(tc.in)
		if tc.wantErr == nil {
			if err != nil {
				t.Errorf("ParseAllowList(%q) error %v, want none", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseAllowList(%q) (-want +got):\n%s", tc.in, diff)
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseAllowList(%q) = %q, want an error", tc.in, got)
			continue
		}
		for _, w := range tc.wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ParseAllowList(%q) error %q, want it to contain %s", tc.in, err, w)
			}
		}
	}
}

// TestAllowEntryMatches: a bare entry matches its host on every port, a host:port entry on that
// port only; addresses match in any spelling of the same address.
func TestAllowEntryMatches(t *testing.T) {
	for _, tc := range []struct {
		entry string
		host  string
		port  uint16
		want  bool
	}{
		{"localhost", "localhost", 1, true},
		{"localhost", "LOCALHOST.", 65535, true},
		{"localhost", "app.localhost", 80, false},
		{"localhost:8080", "localhost", 8080, true},
		{"localhost:8080", "localhost", 8081, false},
		{"localhost:8080", "localhost", 80, false},
		{"Dev.Example.:443", "dev.example", 443, true},
		{"127.0.0.1", "127.0.0.1", 9, true},
		{"127.0.0.1", "::ffff:127.0.0.1", 9, true},
		{"127.0.0.1", "127.0.0.2", 9, false},
		{"127.0.0.1", "localhost", 9, false},
		{"127.0.0.1:3001", "127.0.0.1", 3001, true},
		{"127.0.0.1:3001", "127.0.0.1", 3002, false},
		{"::1", "[::1]", 80, true},
		{"[::1]", "0:0::1", 80, true},
		{"[::1]:8080", "::1", 8080, true},
		{"[::1]:8080", "[0::1]", 8080, true},
		{"[::1]:8080", "::1", 8081, false},
		{"[::1]:8080", "127.0.0.1", 8080, false},
	} {
		e, err := parseAllowEntry(tc.entry)
		if err != nil {
			t.Fatalf("parseAllowEntry(%q): %v", tc.entry, err)
		}
		if got := e.matches(tc.host, tc.port); got != tc.want {
			t.Errorf("entry %q matches %s port %d = %v, want %v", tc.entry, tc.host, tc.port, got, tc.want)
		}
	}
	// An entry is read once into its parts: a bracketed IPv6 with a port is that address.
	e, _ := parseAllowEntry("[::1]:8080")
	if e.addr != netip.MustParseAddr("::1") || e.port != 8080 || e.name != "" {
		t.Errorf("parseAllowEntry([::1]:8080) = %+v", e)
	}
}
