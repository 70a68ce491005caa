package lambdarun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/lambdarun"
	"github.com/agentorch/agentorch/infra/localstack"
)

// buildMeta builds functions/meta the way the Makefile does, once per test binary run.
func buildMeta(tb testing.TB) string {
	tb.Helper()
	root, err := localstack.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(tb.TempDir(), "meta", "bootstrap")
	if _, err := lambdarun.Build(context.Background(), root, "meta", out); err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestRunHealth(t *testing.T) {
	bin := buildMeta(t)
	event, err := os.ReadFile("testdata/health.json")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	res, err := lambdarun.Run(context.Background(), lambdarun.Options{Bootstrap: bin, Function: "meta", Event: event, Stderr: &logs})
	if err != nil {
		t.Fatalf("run: %v\nlogs:\n%s", err, logs.String())
	}
	var resp struct {
		StatusCode int               `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
		Body       string            `json:"body"`
	}
	if err := json.Unmarshal(res.Response, &resp); err != nil {
		t.Fatalf("response %s: %v", res.Response, err)
	}
	if resp.StatusCode != 200 {
		t.Errorf("statusCode = %d, want 200; response %s", resp.StatusCode, res.Response)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil || body["status"] != "ok" {
		t.Errorf("body = %q, want {\"status\":\"ok\"}", resp.Body)
	}
	if got := resp.Headers["X-Request-Id"]; got != "lambdarun-health-1" {
		t.Errorf("X-Request-Id = %q, want the API Gateway request id", got)
	}
	if res.InitDuration <= 0 || res.InitDuration > 10*time.Second {
		t.Errorf("InitDuration = %s, want a positive cold start under 10s", res.InitDuration)
	}
	fi, _ := os.Stat(bin)
	if res.BinaryBytes != fi.Size() {
		t.Errorf("BinaryBytes = %d, want %d", res.BinaryBytes, fi.Size())
	}
}

// An event the handler cannot decode is reported through /error, as Lambda would.
func TestRunFunctionError(t *testing.T) {
	bin := buildMeta(t)
	res, err := lambdarun.Run(context.Background(), lambdarun.Options{Bootstrap: bin, Function: "meta", Event: []byte(`[1,2,3]`)})
	var fe *lambdarun.FunctionError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a *FunctionError; response %s", err, res.Response)
	}
	if fe.Phase != "invoke" || len(fe.Payload) == 0 {
		t.Errorf("got phase %q payload %s, want an invoke error with a payload", fe.Phase, fe.Payload)
	}
}

// BenchmarkColdStartMeta measures what a cold start of the meta function costs locally: exec to
// the first /next (init-ms), peak memory and the binary's size.
func BenchmarkColdStartMeta(b *testing.B) {
	bin := buildMeta(b)
	event, err := os.ReadFile("testdata/health.json")
	if err != nil {
		b.Fatal(err)
	}
	var init time.Duration
	var rss int64
	var size int64
	b.ResetTimer()
	for range b.N {
		res, err := lambdarun.Run(context.Background(), lambdarun.Options{Bootstrap: bin, Function: "meta", Event: event})
		if err != nil {
			b.Fatal(err)
		}
		init += res.InitDuration
		rss = max(rss, res.MaxRSSBytes)
		size = res.BinaryBytes
	}
	b.ReportMetric(float64(init.Microseconds())/1000/float64(b.N), "init-ms")
	b.ReportMetric(float64(rss), "maxrss-bytes")
	b.ReportMetric(float64(size), "binary-bytes")
}
