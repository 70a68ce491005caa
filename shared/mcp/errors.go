package mcp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
)

// maxServerMessage caps the part of a server's own error message that a Reason quotes.
const maxServerMessage = 200

// attempt is one handshake or call, as classify needs it to name a failure.
type attempt struct {
	ctx     context.Context // the caller's
	callCtx context.Context // ctx bounded by the endpoint's timeout
	timeout time.Duration   // the endpoint's
	began   time.Time       // when the caller's operation began (a registration: its whole tools/list)
	pr      *probe          // what the server answered on the wire during the attempt
	stream  *probe          // the session's own stream (HTTP+SSE), or nil
	red     *redactor       // the endpoint's header values
}

// classify turns a failed attempt into a *domain.MCPError named by what happened. err is kept
// for logs only; neither holds a header value the server may have echoed.
func (a attempt) classify(err error) error {
	status, contentType, wireErr := a.pr.seen()
	var other *otherOriginError
	var authFailed *domain.MCPError // what an authorization (ep.Auth) said
	reason := func() string {
		switch {
		case errors.As(err, &authFailed):
			return authFailed.Reason
		case errors.Is(err, netguard.ErrForbiddenDestination) || errors.Is(wireErr, netguard.ErrForbiddenDestination):
			if errors.Is(wireErr, netguard.ErrForbiddenDestination) {
				return refusedReason(wireErr)
			}
			return refusedReason(err)
		case errors.As(wireErr, &other) || errors.As(err, &other):
			return fmt.Sprintf("the server sent the request to %s, another origin than its own; its headers go to its own origin only", other.origin)
		case a.pr.wasTooLarge() || a.stream.wasTooLarge():
			return tooLargeReason
		case errors.Is(a.ctx.Err(), context.Canceled):
			return "the call was cancelled"
		case a.ctx.Err() != nil:
			// The caller's deadline ran out first (a registration's budget for the whole
			// tools/list): name its time, counted from the operation's start.
			dl, _ := a.ctx.Deadline()
			return "timed out after " + roundDuration(dl.Sub(a.began)).String()
		case errors.Is(a.callCtx.Err(), context.DeadlineExceeded):
			return "timed out after " + a.timeout.String()
		case wireErr != nil:
			return unreachableReason(wireErr)
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return fmt.Sprintf("the server refused the request (HTTP %d); check the headers", status)
		case status != 0 && (status < 200 || status > 299):
			return fmt.Sprintf("did not answer as an MCP server (HTTP %d)", status)
		case status != 0 && contentType != "application/json" && contentType != "text/event-stream":
			ct := contentType
			if ct == "" {
				ct = "no content type"
			}
			return fmt.Sprintf("did not answer as an MCP server (HTTP %d, %s)", status, quote(ct))
		}
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			// Redacted before it is cut, so that no part of a value stays at the cut.
			return fmt.Sprintf("the server answered error %d: %s", rpcErr.Code, quote(a.red.text(rpcErr.Message)))
		}
		if status != 0 {
			return fmt.Sprintf("did not answer as an MCP server (HTTP %d with an answer that is not MCP)", status)
		}
		return "the MCP connection failed"
	}()
	return &domain.MCPError{Reason: a.red.text(reason), Err: a.red.err(err)}
}

// roundDuration rounds d for a reason: to 10 ms under a second, to 100 ms above.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		d = max(d, 0)
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// refusedReason names an address guard refusal without the sentinel's own words.
func refusedReason(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, netguard.ErrForbiddenDestination.Error()+": "); i >= 0 {
		msg = msg[i+len(netguard.ErrForbiddenDestination.Error())+2:]
	}
	return "the address is not allowed: " + msg
}

// unreachableReason names a transport failure.
func unreachableReason(err error) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return "the host name could not be resolved"
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return "the server's TLS certificate is not valid"
	case errors.As(err, &recordErr):
		return "the server does not speak TLS on that port"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "the connection was reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "the host is unreachable"
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return "the connection timed out"
	}
	return "the server could not be reached"
}

// quote returns a server's message on one line, capped.
func quote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxServerMessage {
		s = strings.ToValidUTF8(s[:maxServerMessage], "") + "…"
	}
	return s
}
