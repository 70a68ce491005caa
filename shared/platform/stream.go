package platform

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdaurl"
)

// FunctionURLHandler adapts an http.Handler to the events of a Lambda function URL whose invoke
// mode is RESPONSE_STREAM. lambdaurl writes the streaming response: the HTTP integration prelude
// (status, headers and cookies as JSON, then eight NUL bytes) as soon as the handler writes its
// header, then every Write at once through a pipe to the runtime's chunked POST, which the Go HTTP
// client flushes chunk by chunk. Its writer holds nothing back, so it needs no Flush (and has
// none: http.ResponseController answers ErrNotSupported, which the SSE writer ignores).
//
// As HTTPHandler does, it always answers with a response: a request lambdaurl cannot turn into
// an http.Request gets the 400 envelope rather than a function error (which the URL would turn
// into a bare 502).
func FunctionURLHandler(h http.Handler, log *slog.Logger) func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	wrapped := lambdaurl.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ev, ok := lambdaurl.RequestFromContext(r.Context()); ok && ev.RequestContext.RequestID != "" && r.Header.Get(RequestIDHeader) == "" {
			r.Header.Set(RequestIDHeader, ev.RequestContext.RequestID)
		}
		h.ServeHTTP(w, r)
	}))
	return func(ctx context.Context, ev *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
		resp, err := wrapped(ctx, ev)
		if err != nil {
			log.ErrorContext(ctx, "function URL request", "request_id", ev.RequestContext.RequestID, "err", err)
			return &events.LambdaFunctionURLStreamingResponse{
				StatusCode: http.StatusBadRequest,
				Headers:    map[string]string{"Content-Type": "application/json"},
				Body:       strings.NewReader(`{"error":{"type":"invalid_request_error","message":"The request could not be read"}}`),
			}, nil
		}
		return resp, nil
	}
}

// StartHTTPStream runs h as a Lambda function behind a function URL in RESPONSE_STREAM mode. It
// does not return.
func StartHTTPStream(h http.Handler, log *slog.Logger) {
	lambda.Start(FunctionURLHandler(h, log))
}

// MainHTTPStream is MainHTTP for a function behind a streaming function URL.
func MainHTTPStream(build HandlerBuilder) { run(build, StartHTTPStream) }
