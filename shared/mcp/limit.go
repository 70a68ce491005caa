package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Bounds of what a server's answers may take in memory, counted after decompression (Go's
// transport inflates a gzip body transparently, so a 510 KB body can be 512 MiB of JSON).
const (
	// MaxAnswerBytes caps one message of a server: a JSON answer's whole body, or one event of an
	// event stream (the bytes since the last blank line). A long-lived stream is not capped in
	// total, each of its messages is. Past it the call fails (ErrAnswerTooLarge).
	MaxAnswerBytes = 4 << 20
	// MaxToolListBytes caps a server's whole tool list, every page of tools/list together, as
	// JSON.
	MaxToolListBytes = 4 << 20
)

// ErrAnswerTooLarge marks an answer, or one event of a stream, longer than MaxAnswerBytes.
var ErrAnswerTooLarge = errors.New("MCP answer too large")

// tooLargeReason is what a call failing with ErrAnswerTooLarge says.
var tooLargeReason = fmt.Sprintf("the server's answer is larger than %d MiB", MaxAnswerBytes>>20)

// capBody bounds resp's body before the SDK reads it and reports an error when the answer is
// already known to be too large. A JSON answer of a request is read here, at most
// MaxAnswerBytes of it, so that an answer too large fails its request (the SDK keeps the
// session for other calls) instead of failing the SDK's reader, which ends the session. An event
// stream is bounded per event as it is read; any other body as a whole. An error answer
// (not 2xx) is only read for its message: it is cut at the cap without an error.
func capBody(resp *http.Response, mediaType string, pr *probe) error {
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	switch {
	case mediaType == "text/event-stream":
		resp.Body = &eventCap{body: resp.Body, pr: pr}
	case !ok:
		resp.Body = &bodyCap{body: resp.Body, left: MaxAnswerBytes, quiet: true}
	case mediaType == "application/json":
		if resp.ContentLength > MaxAnswerBytes {
			_ = resp.Body.Close()
			pr.tooLarge()
			return ErrAnswerTooLarge
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
		_ = resp.Body.Close() // unread bytes of a bomb stay on the wire: the connection is dropped
		if err != nil {
			return err
		}
		if len(b) > MaxAnswerBytes {
			pr.tooLarge()
			return ErrAnswerTooLarge
		}
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	default:
		resp.Body = &bodyCap{body: resp.Body, left: MaxAnswerBytes, pr: pr}
	}
	return nil
}

// bodyCap reads at most left bytes of a body; the next read fails with ErrAnswerTooLarge, or
// ends it (quiet).
type bodyCap struct {
	body  io.ReadCloser
	left  int64
	quiet bool
	pr    *probe
	err   error
}

func (b *bodyCap) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left <= 0 {
		// One byte more tells a body of exactly the cap from a longer one.
		var one [1]byte
		if n, err := b.body.Read(one[:]); n == 0 {
			return 0, err
		}
		b.err = ErrAnswerTooLarge
		if b.quiet {
			b.err = io.EOF
		} else {
			b.pr.tooLarge()
		}
		return 0, b.err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *bodyCap) Close() error { return b.body.Close() }

// eventCap bounds each event of a text/event-stream body: the bytes since the last blank line
// (a line of nothing or of "\r" alone, as the SDK's scanner reads them). Past MaxAnswerBytes
// every read fails with ErrAnswerTooLarge, so neither the SDK's scanner nor its draining of the
// stream reads further.
type eventCap struct {
	body    io.ReadCloser
	pr      *probe
	inEvent int // bytes of the current event
	inLine  int // bytes of the current line, "\r" aside
	err     error
}

func (e *eventCap) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.body.Read(p)
	for i, c := range p[:n] {
		e.inEvent++
		switch c {
		case '\n':
			if e.inLine == 0 {
				e.inEvent = 0
			}
			e.inLine = 0
		case '\r':
		default:
			e.inLine++
		}
		if e.inEvent > MaxAnswerBytes {
			e.err = ErrAnswerTooLarge
			e.pr.tooLarge()
			return i, e.err
		}
	}
	return n, err
}

func (e *eventCap) Close() error { return e.body.Close() }
