package platform

import (
	"context"
	"log/slog"
	"net/http"

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

// StartHTTP runs h as a Lambda function behind API Gateway. It does not return.
func StartHTTP(h http.Handler, log *slog.Logger) {
	lambda.Start(HTTPHandler(h, log))
}
