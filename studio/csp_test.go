package studio

import (
	"strings"
	"testing"
)

// The stream address and the upload origins, and nothing else, join connect-src.
func TestPolicyConnectSources(t *testing.T) {
	csp := policy("https://abc.lambda-url.us-east-1.on.aws/", "https://media.s3.us-east-1.amazonaws.com", "not a url", "ftp://x")
	want := "connect-src 'self' https://abc.lambda-url.us-east-1.on.aws https://media.s3.us-east-1.amazonaws.com;"
	if !strings.Contains(csp, want) {
		t.Fatalf("csp = %s\nwant %s", csp, want)
	}
}
