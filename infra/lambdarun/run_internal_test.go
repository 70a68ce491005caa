package lambdarun

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A failure met mid-stream comes in the trailers, its body base64-encoded, as the streaming
// response mode says: the invocation is a function error with that document, and what was
// streamed before it reached the client. A runtime that declares the mode by its header is read
// as streamed as well.
func TestStreamTrailers(t *testing.T) {
	var client bytes.Buffer
	rt := &runtimeAPI{requestID: "r1", stream: &client, done: make(chan answer, 1), closing: make(chan struct{})}
	srv := httptest.NewServer(rt.handler())
	defer srv.Close()

	doc := `{"errorMessage":"boom","errorType":"Panic"}`
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/2018-06-01/runtime/invocation/r1/response",
		io.MultiReader(strings.NewReader(`{"statusCode":200}`+"\x00\x00\x00\x00\x00\x00\x00\x00"), strings.NewReader("event: text\n\n")))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(headerResponseMode, "streaming")
	req.Header.Set("Content-Type", HTTPContentType)
	req.Trailer = http.Header{headerErrorType: {"Panic"}, trailerErrorBody: {base64.StdEncoding.EncodeToString([]byte(doc))}}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		t.Errorf("status %d, want 202", res.StatusCode)
	}
	a := <-rt.done
	if a.errPhase != "invoke" || a.errType != "Panic" || string(a.errPayload) != doc || !a.streamed {
		t.Errorf("answer %+v (payload %s), want the invoke error of the trailers", a, a.errPayload)
	}
	if _, body, err := SplitHTTP(client.Bytes()); err != nil || string(body) != "event: text\n\n" {
		t.Errorf("the client got %q (%v), want what came before the failure", client.Bytes(), err)
	}
}

// A streamed response past the streaming limit (20 MB, not Invoke's 6 MB) is a function error.
func TestStreamLimit(t *testing.T) {
	rt := &runtimeAPI{requestID: "r1", stream: io.Discard, done: make(chan answer, 1), closing: make(chan struct{})}
	srv := httptest.NewServer(rt.handler())
	defer srv.Close()
	post := func(n int) answer {
		res, err := http.Post(srv.URL+"/2018-06-01/runtime/invocation/r1/response", HTTPContentType, io.MultiReader(bytes.NewReader(make([]byte, n))))
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return <-rt.done
	}
	if a := post(maxPayload + 1); a.errPhase != "" {
		t.Errorf("a 6 MB+1 stream failed: %s", a.errPayload)
	}
	if a := post(maxStreamPayload + 1); a.errType != "Function.ResponseSizeTooLarge" {
		t.Errorf("a 20 MB+1 stream: %+v, want Function.ResponseSizeTooLarge", a.errType)
	}
}
