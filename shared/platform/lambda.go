package platform

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// RequestIDHeader carries the request id from the edge to the handlers and back to the client.
const RequestIDHeader = "X-Request-Id"

// HTTPHandler adapts an http.Handler to API Gateway HTTP API (payload 2.0) events. It always
// answers with a response: a Go error returned to Lambda would make API Gateway send its own
// generic body instead of the service's error envelope.
func HTTPHandler(h http.Handler, log *slog.Logger) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	adapter := httpadapter.NewV2(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.RequestID != "" && r.Header.Get(RequestIDHeader) == "" {
			r.Header.Set(RequestIDHeader, rc.RequestID)
		}
		h.ServeHTTP(w, r)
	}))
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		resp, err := adapter.ProxyWithContext(ctx, ev)
		if err != nil {
			log.ErrorContext(ctx, "proxy request", "request_id", ev.RequestContext.RequestID, "err", err)
			return events.APIGatewayV2HTTPResponse{
				StatusCode: http.StatusBadRequest,
				Headers:    map[string]string{"Content-Type": "application/json"},
				Body:       `{"error":{"type":"invalid_request_error","message":"The request could not be read"}}`,
			}, nil
		}
		return resp, nil
	}
}

// StageURL is the public base URL of the API Gateway stage that a request from HTTPHandler came
// through: https://<domainName>, plus /<stage> for a named stage of an execute-api domain. Both
// come from the request context that API Gateway builds, which a client cannot set (unlike the
// Host header). ok is false outside Lambda. Behind a custom domain with a base-path mapping the
// path is unknown here: set PUBLIC_BASE_URL there.
func StageURL(ctx context.Context) (string, bool) {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(ctx)
	if !ok || !hostName().MatchString(rc.DomainName) {
		return "", false
	}
	u := "https://" + rc.DomainName
	if rc.Stage != "" && rc.Stage != "$default" && strings.Contains(rc.DomainName, ".execute-api.") && stageName().MatchString(rc.Stage) {
		u += "/" + rc.Stage
	}
	return u, true
}

// The patterns are compiled on first use, not at every function's init (a counted repetition
// makes a large program).
var (
	hostName = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$`)
	})
	stageName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`) })
)

// StartHTTP runs h as a Lambda function behind API Gateway. It does not return.
func StartHTTP(h http.Handler, log *slog.Logger) {
	lambda.Start(HTTPHandler(h, log))
}
