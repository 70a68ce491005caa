package telemetry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Exporter sends spans over OTLP/HTTP in binary protobuf. It is the SDK's otlptracehttp in
// small: that exporter imports the OTLP collector service package, which links gRPC into a
// function that never speaks it (the runtime would grow by about 7 MB), and the generated
// protobuf types alone add 1.7 MB; Encode writes the few messages of a trace export with
// protowire instead (encode.go).
type Exporter struct {
	url     string
	headers map[string]string
	client  *http.Client
}

// NewExporter returns an exporter that POSTs to url (…/v1/traces) with headers, each export
// within timeout.
func NewExporter(url string, headers map[string]string, timeout time.Duration) *Exporter {
	return &Exporter{url: url, headers: headers, client: &http.Client{Timeout: timeout}}
}

// ExportSpans implements sdktrace.SpanExporter.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body := Encode(spans)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("otlp request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("otlp export: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("otlp export: %s answered %d", e.url, resp.StatusCode)
	}
	return nil
}

// Shutdown implements sdktrace.SpanExporter.
func (e *Exporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}
