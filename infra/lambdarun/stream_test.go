package lambdarun_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/lambdarun"
	"github.com/agentorch/agentorch/infra/localstack"
)

// urlEvent is a function URL request, as Lambda passes it.
const urlEvent = `{"version":"2.0","routeKey":"$default","rawPath":"/api/v1/runtime/s1/execute/","rawQueryString":"stream=true",
"headers":{"content-type":"application/json"},"requestContext":{"requestId":"url-1","domainName":"abc.lambda-url.us-east-1.on.aws",
"http":{"method":"POST","path":"/api/v1/runtime/s1/execute/","protocol":"HTTP/1.1","sourceIp":"203.0.113.10"}},"body":"{}","isBase64Encoded":false}`

// lockedBuffer is the test's client of a streaming invocation.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestRunStreams: a function behind a streaming function URL (testdata/streamfn, through
// platform.StartHTTPStream) gets its first event to the client while it still runs: it cannot
// end before the client has seen that event, since it waits for the gate the test opens only
// then. The prelude comes apart from the body, which ends with the last event.
func TestRunStreams(t *testing.T) {
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "streamfn", "bootstrap")
	cmd := exec.Command("go", "build", "-tags", lambdarun.AWSTags, "-o", bin, "./infra/lambdarun/testdata/streamfn")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}

	var body lockedBuffer
	var prelude lambdarun.HTTPPrelude
	stream := lambdarun.NewHTTPWriter(&body, func(p lambdarun.HTTPPrelude) error { prelude = p; return nil })
	var sawFirst bool
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The function asks once it has written the first event; the gate opens when the client has it.
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(body.String(), "event: first\n") && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		sawFirst = strings.Contains(body.String(), "event: first\n") && !strings.Contains(body.String(), "event: last")
	}))
	defer gate.Close()

	var logs bytes.Buffer
	res, err := lambdarun.Run(context.Background(), lambdarun.Options{Bootstrap: bin, Function: "stream", Event: []byte(urlEvent),
		Env: []string{"GATE_URL=" + gate.URL}, Stream: stream, Stderr: &logs})
	if err != nil {
		t.Fatalf("run: %v\nlogs:\n%s", err, logs.String())
	}
	if !sawFirst {
		t.Errorf("the client did not have the first event alone while the function waited; body %q", body.String())
	}
	if prelude.StatusCode != http.StatusOK || prelude.Headers["Content-Type"] != "text/event-stream" {
		t.Errorf("prelude %+v", prelude)
	}
	want := "event: first\ndata: {}\n\nevent: last\ndata: {\"path\":\"/api/v1/runtime/s1/execute/\"}\n\n"
	if body.String() != want {
		t.Errorf("body %q, want %q", body.String(), want)
	}
	if _, whole, err := lambdarun.SplitHTTP(res.Response); err != nil || string(whole) != want {
		t.Errorf("Result.Response body %q, %v", whole, err)
	}
	if !res.Streamed || res.FirstByte <= 0 || res.FirstByte >= res.Duration {
		t.Errorf("Streamed %v, FirstByte %s, Duration %s: want a chunked response whose first byte came before its end", res.Streamed, res.FirstByte, res.Duration)
	}
}

// A prelude without its delimiter, or not JSON, is an error of the writer.
func TestHTTPWriterErrors(t *testing.T) {
	w := lambdarun.NewHTTPWriter(&bytes.Buffer{}, func(lambdarun.HTTPPrelude) error { return nil })
	if _, err := w.Write(append([]byte("not json"), make([]byte, 8)...)); err == nil {
		t.Error("a prelude that is not JSON was accepted")
	}
	w = lambdarun.NewHTTPWriter(&bytes.Buffer{}, func(lambdarun.HTTPPrelude) error { return nil })
	if _, err := w.Write(bytes.Repeat([]byte("x"), 65<<10)); err == nil {
		t.Error("65 KB without a delimiter was accepted")
	}
	stop := errors.New("stop")
	w = lambdarun.NewHTTPWriter(&bytes.Buffer{}, func(lambdarun.HTTPPrelude) error { return stop })
	if _, err := w.Write(append([]byte(`{"statusCode":200}`), make([]byte, 8)...)); !errors.Is(err, stop) {
		t.Errorf("the prelude callback's error was %v", err)
	}
}
