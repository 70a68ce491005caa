package platform_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/platform"
)

// readPrelude reads the HTTP integration prelude of a streaming response: JSON, then 8 NULs.
func readPrelude(t *testing.T, r *bufio.Reader) map[string]any {
	t.Helper()
	var raw []byte
	for !bytes.HasSuffix(raw, make([]byte, 8)) {
		b, err := r.ReadByte()
		if err != nil {
			t.Fatalf("prelude %q: %v", raw, err)
		}
		raw = append(raw, b)
	}
	var p map[string]any
	if err := json.Unmarshal(raw[:len(raw)-8], &p); err != nil {
		t.Fatalf("prelude %q: %v", raw, err)
	}
	return p
}

// TestFunctionURLHandlerStreams: what the handler writes reaches the response while the handler
// still runs (it waits for the test to have read the first event), after a prelude carrying its
// status, headers and cookies, and the request id of the function URL's request context.
func TestFunctionURLHandlerStreams(t *testing.T) {
	release := make(chan struct{})
	var gotID string
	h := platform.FunctionURLHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotID = r.Header.Get(platform.RequestIDHeader)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Add("Set-Cookie", "a=1")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "event: first\ndata: {}\n\n")
		if err := http.NewResponseController(w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			t.Errorf("Flush: %v", err)
		}
		<-release
		_, _ = io.WriteString(w, "event: last\ndata: {}\n\n")
	}), slog.New(slog.DiscardHandler))
	ev := &events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: "/api/v1/runtime/s/execute/", RawQueryString: "stream=true",
		Headers: map[string]string{"content-type": "application/json"}, Body: "{}",
		RequestContext: events.LambdaFunctionURLRequestContext{RequestID: "url-req-1", DomainName: "abc.lambda-url.us-east-1.on.aws",
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/api/v1/runtime/s/execute/"}},
	}
	resp, err := h(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ContentType() != "application/vnd.awslambda.http-integration-response" {
		t.Errorf("content type %q", resp.ContentType())
	}
	r := bufio.NewReader(resp)
	want := map[string]any{"statusCode": float64(200), "headers": map[string]any{"Content-Type": "text/event-stream"}, "cookies": []any{"a=1"}}
	if diff := cmp.Diff(want, readPrelude(t, r)); diff != "" {
		t.Errorf("prelude (-want +got):\n%s", diff)
	}
	first := make([]byte, len("event: first\ndata: {}\n\n"))
	if _, err := io.ReadFull(r, first); err != nil || string(first) != "event: first\ndata: {}\n\n" {
		t.Fatalf("first event %q, %v (read while the handler waits)", first, err)
	}
	close(release)
	rest, err := io.ReadAll(r)
	if err != nil || string(rest) != "event: last\ndata: {}\n\n" {
		t.Errorf("rest %q, %v", rest, err)
	}
	if gotID != "url-req-1" {
		t.Errorf("X-Request-Id = %q, want the function URL's request id", gotID)
	}
}

// A request that cannot become an http.Request is answered with the 400 envelope, not an error.
func TestFunctionURLHandlerBadRequest(t *testing.T) {
	h := platform.FunctionURLHandler(http.NotFoundHandler(), slog.New(slog.DiscardHandler))
	resp, err := h(context.Background(), &events.LambdaFunctionURLRequest{
		RequestContext: events.LambdaFunctionURLRequestContext{HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "BAD METHOD"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(resp)
	if p := readPrelude(t, r); p["statusCode"] != float64(400) {
		t.Errorf("prelude %v, want status 400", p)
	}
	if body, _ := io.ReadAll(r); !bytes.Contains(body, []byte(`"invalid_request_error"`)) {
		t.Errorf("body %s", body)
	}
}
