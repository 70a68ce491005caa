package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// serverLimits are what the dev server enforces before a request reaches a handler, as API
// Gateway's HTTP API does before it invokes Lambda
// (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html).
type serverLimits struct {
	// HeaderBytes bounds the request line and header values together (API Gateway: 10240
	// bytes); over it the answer is 431 in the error envelope.
	HeaderBytes int
	// HeaderTimeout bounds the wait for the request line and headers; a client that has not sent
	// them by then has its connection closed without an answer.
	HeaderTimeout time.Duration
	// ReadTimeout bounds the wait for the whole request, headers and body (API Gateway's
	// integration timeout is 30 s); a body that has not arrived by then is answered with 408 in
	// the error envelope (by the handler, whose read fails) and the connection is closed.
	// It does not limit the handler: net/http lifts the deadline once the body is read.
	ReadTimeout time.Duration
}

// gatewayLimits are the limits of a deployed HTTP API.
func gatewayLimits() serverLimits {
	return serverLimits{HeaderBytes: 10240, HeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second}
}

// newServer is the dev server's http.Server for h. Serve it on envelopeListener{l, lim}, so
// that the answers net/http writes itself are in the envelope too.
func newServer(h http.Handler, lim serverLimits) *http.Server {
	return &http.Server{
		Handler:           withHeaderLimit(h, lim.HeaderBytes),
		ReadHeaderTimeout: lim.HeaderTimeout,
		ReadTimeout:       lim.ReadTimeout,
		// net/http reads up to 4 KiB beyond this before it gives up with its own plain-text 431,
		// which envelopeConn rewrites; withHeaderLimit checks the exact limit.
		MaxHeaderBytes: lim.HeaderBytes,
	}
}

// withHeaderLimit refuses requests whose request line and header values exceed limit bytes.
func withHeaderLimit(next http.Handler, limit int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if headerBytes(r) > limit {
			writeEnvelope(w, domain.KindHeadersTooLarge, headersTooLarge(limit))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// headerBytes is what API Gateway counts: the request line and the header values.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + len(r.Host)
	for _, vs := range r.Header {
		for _, v := range vs {
			n += len(v)
		}
	}
	return n
}

func headersTooLarge(limit int) string {
	return fmt.Sprintf("The request line and headers are larger than the limit of %d bytes", limit)
}

func writeEnvelope(w http.ResponseWriter, k domain.Kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(k.Status())
	_ = json.NewEncoder(w).Encode(envelope(k, msg))
}

func envelope(k domain.Kind, msg string) map[string]any {
	return map[string]any{"error": map[string]string{"type": k.Type(), "message": msg}}
}

// envelopeListener hands out connections on which the answers net/http writes itself, when it
// cannot read a request at all, are rewritten into the error envelope.
type envelopeListener struct {
	net.Listener
	limits serverLimits
}

// Accept wraps each connection in an envelopeConn.
func (l envelopeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &envelopeConn{Conn: c, limits: l.limits}, nil
}

// envelopeConn rewrites net/http's canned answers: headers over MaxHeaderBytes (431) and
// requests it cannot parse (400).
type envelopeConn struct {
	net.Conn
	limits serverLimits
}

// cannedHeaders follow the status line of every answer net/http writes straight to the
// connection (net/http/server.go, conn.serve); answers from handlers always carry a Date.
const cannedHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *envelopeConn) Write(p []byte) (int, error) {
	out, ok := c.rewrite(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *envelopeConn) rewrite(p []byte) ([]byte, bool) {
	s, ok := strings.CutPrefix(string(p), "HTTP/1.1 ")
	if !ok {
		return nil, false
	}
	status, text, ok := strings.Cut(s, cannedHeaders)
	if !ok || strings.Contains(status, "\r\n") || len(status) < 3 {
		return nil, false
	}
	var k domain.Kind
	var msg string
	switch code, _ := strconv.Atoi(status[:3]); code {
	case http.StatusRequestHeaderFieldsTooLarge:
		k, msg = domain.KindHeadersTooLarge, headersTooLarge(c.limits.HeaderBytes)
	case http.StatusBadRequest:
		k, msg = domain.KindInvalid, "The request is not valid HTTP/1.1 ("+text+")"
	default:
		return nil, false
	}
	body, _ := json.Marshal(envelope(k, msg))
	body = append(body, '\n')
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		k.Status(), http.StatusText(k.Status()), len(body), body), true
}

// CloseWrite lets net/http half-close the connection after a canned answer, as it would
// without the wrapper, so that the client can still read the answer.
func (c *envelopeConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
