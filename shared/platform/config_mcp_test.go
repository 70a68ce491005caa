package platform

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// unsetEnv removes name for the test (t.Setenv restores it after).
func unsetEnv(t *testing.T, name string) {
	t.Helper()
	t.Setenv(name, "")
	if err := os.Unsetenv(name); err != nil {
		t.Fatal(err)
	}
}

// TestLoadConfigCredentials: the credentials key defaults to the local development secret
// locally and to none in Lambda (where CREDENTIALS_KEY_ARN names the secret); MCP_ALLOWED_HOSTS
// defaults to loopback locally and to nothing in Lambda, set but empty allows nothing, it takes
// host and host:port entries, and a malformed entry fails the load with an error naming it.
func TestLoadConfigCredentials(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env       map[string]string
		unset     []string
		key, arn  string
		hosts     []string
		wantError string
	}{
		{name: "local defaults", unset: []string{"MCP_ALLOWED_HOSTS", "CREDENTIALS_KEY"},
			key: LocalCredentialsKey, hosts: []string{"localhost", "127.0.0.1", "::1"}},
		{name: "lambda defaults", unset: []string{"MCP_ALLOWED_HOSTS", "CREDENTIALS_KEY"},
			env: map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn", "TOKEN_SECRET_ARN": "arn:t", "CREDENTIALS_KEY_ARN": "arn:c"},
			arn: "arn:c"},
		{name: "explicit", env: map[string]string{"MCP_ALLOWED_HOSTS": " mcp.internal , 10.0.0.5,,", "CREDENTIALS_KEY": strings.Repeat("x", 32)},
			key: strings.Repeat("x", 32), hosts: []string{"mcp.internal", "10.0.0.5"}},
		{name: "host and host:port entries", env: map[string]string{"MCP_ALLOWED_HOSTS": "mcp.internal,mcp.internal:8443, 10.0.0.5:80,[::1]:8080,::1"}, unset: []string{"CREDENTIALS_KEY"},
			key: LocalCredentialsKey, hosts: []string{"mcp.internal", "mcp.internal:8443", "10.0.0.5:80", "[::1]:8080", "::1"}},
		{name: "a URL is refused", env: map[string]string{"MCP_ALLOWED_HOSTS": "localhost,http://x"}, wantError: `MCP_ALLOWED_HOSTS: allowed host "http://x"`},
		{name: "a bad port is refused", env: map[string]string{"MCP_ALLOWED_HOSTS": "x:abc"}, wantError: `MCP_ALLOWED_HOSTS: allowed host "x:abc"`},
		{name: "an empty host is refused", env: map[string]string{"MCP_ALLOWED_HOSTS": ":80"}, wantError: `MCP_ALLOWED_HOSTS: allowed host ":80"`},
		{name: "a path is refused", env: map[string]string{"MCP_ALLOWED_HOSTS": "x/y"}, wantError: `MCP_ALLOWED_HOSTS: allowed host "x/y"`},
		{name: "a wildcard is refused", env: map[string]string{"MCP_ALLOWED_HOSTS": "*.internal"}, wantError: `MCP_ALLOWED_HOSTS: allowed host "*.internal"`},
		{name: "refused in Lambda too", env: map[string]string{"MCP_ALLOWED_HOSTS": "mcp.internal:0", "AWS_LAMBDA_FUNCTION_NAME": "fn", "TOKEN_SECRET_ARN": "arn:t", "CREDENTIALS_KEY_ARN": "arn:c"},
			wantError: `MCP_ALLOWED_HOSTS: allowed host "mcp.internal:0"`},
		{name: "set but empty allows nothing", env: map[string]string{"MCP_ALLOWED_HOSTS": ""}, unset: []string{"CREDENTIALS_KEY"},
			key: LocalCredentialsKey},
		{name: "short key", env: map[string]string{"CREDENTIALS_KEY": "short"}, wantError: "CREDENTIALS_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			unsetEnv(t, "CREDENTIALS_KEY_ARN")
			for _, n := range tc.unset {
				unsetEnv(t, n)
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := LoadConfig()
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Errorf("LoadConfig() error = %v, want one naming %s", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.CredentialsKey != tc.key || c.CredentialsKeyARN != tc.arn {
				t.Errorf("CredentialsKey %q, CredentialsKeyARN %q; want %q, %q", c.CredentialsKey, c.CredentialsKeyARN, tc.key, tc.arn)
			}
			if diff := cmp.Diff(tc.hosts, c.MCPAllowedHosts); diff != "" {
				t.Errorf("MCPAllowedHosts (-want +got):\n%s", diff)
			}
		})
	}
}
