package lambdarun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// HTTPContentType is the content type of a function URL's streaming response (the HTTP
// integration response format): a JSON prelude, eight NUL bytes, then the body.
const HTTPContentType = "application/vnd.awslambda.http-integration-response"

// maxPrelude bounds the prelude read before the delimiter (API Gateway takes it within the first
// 16 KB; this is generous).
const maxPrelude = 64 << 10

var delimiter = make([]byte, 8)

// HTTPPrelude is the prelude of a function URL's streaming response: what becomes the status
// line and the headers of the HTTP response the client gets.
type HTTPPrelude struct {
	StatusCode int               `json:"statusCode"`
	Headers    map[string]string `json:"headers,omitempty"`
	Cookies    []string          `json:"cookies,omitempty"`
}

// NewHTTPWriter is an Options.Stream that takes a function URL's streaming response apart as a
// function URL does: prelude is called once the prelude has come whole, then the body goes on
// to body as it arrives.
func NewHTTPWriter(body io.Writer, prelude func(HTTPPrelude) error) io.Writer {
	return &httpWriter{body: body, prelude: prelude}
}

type httpWriter struct {
	body    io.Writer
	prelude func(HTTPPrelude) error
	head    []byte
	done    bool
}

func (w *httpWriter) Write(p []byte) (int, error) {
	if w.done {
		return w.body.Write(p)
	}
	w.head = append(w.head, p...)
	i := bytes.Index(w.head, delimiter)
	if i < 0 {
		if len(w.head) > maxPrelude {
			return 0, fmt.Errorf("no prelude delimiter within %d bytes of the response", maxPrelude)
		}
		return len(p), nil
	}
	var pre HTTPPrelude
	if err := json.Unmarshal(w.head[:i], &pre); err != nil {
		return 0, fmt.Errorf("response prelude %q: %w", w.head[:i], err)
	}
	w.done = true
	if err := w.prelude(pre); err != nil {
		return 0, err
	}
	if rest := w.head[i+len(delimiter):]; len(rest) > 0 {
		if _, err := w.body.Write(rest); err != nil {
			return 0, err
		}
	}
	w.head = nil
	return len(p), nil
}

// SplitHTTP takes a whole streamed response (Result.Response) apart: its prelude and its body.
func SplitHTTP(raw []byte) (HTTPPrelude, []byte, error) {
	var pre HTTPPrelude
	i := bytes.Index(raw, delimiter)
	if i < 0 {
		return pre, nil, errors.New("no prelude delimiter in the response")
	}
	if err := json.Unmarshal(raw[:i], &pre); err != nil {
		return pre, nil, fmt.Errorf("response prelude %q: %w", raw[:i], err)
	}
	return pre, raw[i+len(delimiter):], nil
}
