package vectors_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/agentorch/agentorch/infra/opensearchlocal"
	"github.com/agentorch/agentorch/shared/vectors"
)

// capture serves the stand-in and records the headers of every request.
type capture struct {
	mu      sync.Mutex
	headers []http.Header
}

func newCapture(t *testing.T) (*capture, string) {
	t.Helper()
	srv := opensearchlocal.New(opensearchlocal.Options{})
	c := &capture{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.headers = append(c.headers, r.Header.Clone())
		c.mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return c, ts.URL
}

func (c *capture) all() []http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]http.Header(nil), c.headers...)
}

func TestNewClientSignsWithSigV4ForES(t *testing.T) {
	cap, url := newCapture(t)
	cfg := aws.Config{Region: "eu-central-1", Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", SessionToken: "session-token"}, nil
	})}
	c, err := vectors.NewClient(url, &cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	st, err := vectors.New(c, vectors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := st.EnsureIndex(ctx(t), "m", 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Count(ctx(t), ix, "kb1"); err != nil {
		t.Fatal(err)
	}
	hs := cap.all()
	if len(hs) != 2 {
		t.Fatalf("%d requests, want 2", len(hs))
	}
	auth := regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\d{8}/eu-central-1/es/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*x-amz-date[a-z0-9;-]*, Signature=[0-9a-f]{64}$`)
	for i, h := range hs {
		if a := h.Get("Authorization"); !auth.MatchString(a) {
			t.Errorf("request %d: Authorization %q", i, a)
		}
		if d := h.Get("X-Amz-Date"); !regexp.MustCompile(`^\d{8}T\d{6}Z$`).MatchString(d) {
			t.Errorf("request %d: X-Amz-Date %q", i, d)
		}
		if h.Get("X-Amz-Security-Token") != "session-token" || len(h.Get("X-Amz-Content-Sha256")) != 64 {
			t.Errorf("request %d: token %q, content sha %q", i, h.Get("X-Amz-Security-Token"), h.Get("X-Amz-Content-Sha256"))
		}
	}

	if _, err := vectors.NewClient(url, &aws.Config{}, nil); err == nil {
		t.Error("signing without a region accepted")
	}
}

func TestNewClientLocalIsUnsigned(t *testing.T) {
	cap, url := newCapture(t)
	c, err := vectors.NewClient(url, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	st, _ := vectors.New(c, vectors.Options{})
	if _, err := st.Count(ctx(t), "agentorch-kb-m-4", "kb1"); err != nil {
		t.Fatal(err)
	}
	for _, h := range cap.all() {
		if h.Get("Authorization") != "" || h.Get("X-Amz-Date") != "" {
			t.Errorf("local request signed: %v", h)
		}
	}
	for _, bad := range []string{"", "  ", "http://"} {
		if _, err := vectors.NewClient(bad, nil, nil); err == nil {
			t.Errorf("endpoint %q accepted", bad)
		}
	}
}

// The client sends what the store asks for and nothing else: the library's background polling
// of node statistics (every 5 s by default) is off.
func TestNewClientSendsNothingUnasked(t *testing.T) {
	t.Parallel()
	cap, url := newCapture(t)
	c, err := vectors.NewClient(url, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	st, _ := vectors.New(c, vectors.Options{})
	if _, err := st.Count(ctx(t), "agentorch-kb-m-4", "kb1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second)
	if n := len(cap.all()); n != 1 {
		t.Errorf("%d requests after one Count, want 1", n)
	}
}
