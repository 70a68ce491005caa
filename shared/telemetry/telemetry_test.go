package telemetry

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr bool
	}{
		{"off", nil, Config{Timeout: DefaultTimeout, ServiceName: "agentorch"}, false},
		{"content without endpoint", map[string]string{EnvCaptureContent: "TRUE", lambdaFunctionName: "fn"},
			Config{Timeout: DefaultTimeout, ServiceName: "fn", CaptureContent: true}, false},
		{"base endpoint", map[string]string{EnvEndpoint: "http://collector:4318/", EnvHeaders: "x-api-key=a%20b, team = core", EnvServiceName: "svc"},
			Config{Endpoint: "http://collector:4318/v1/traces", Headers: map[string]string{"x-api-key": "a b", "team": "core"}, Timeout: DefaultTimeout, ServiceName: "svc"}, false},
		{"traces endpoint wins, as it is", map[string]string{EnvEndpoint: "http://a:4318", EnvTracesEndpoint: "https://b/otlp/traces", EnvTracesTimeout: "2500"},
			Config{Endpoint: "https://b/otlp/traces", Headers: map[string]string{}, Timeout: 2500 * time.Millisecond, ServiceName: "agentorch"}, false},
		{"disabled", map[string]string{EnvEndpoint: "http://a:4318", EnvSDKDisabled: "true"}, Config{Timeout: DefaultTimeout, ServiceName: "agentorch"}, false},
		{"exporter none", map[string]string{EnvEndpoint: "http://a:4318", EnvTracesExporter: "none"}, Config{Timeout: DefaultTimeout, ServiceName: "agentorch"}, false},
		{"not a URL", map[string]string{EnvEndpoint: "collector:4318"}, Config{}, true},
		{"bad header", map[string]string{EnvEndpoint: "http://a", EnvHeaders: "novalue"}, Config{}, true},
		{"bad timeout", map[string]string{EnvEndpoint: "http://a", EnvTimeout: "10s"}, Config{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromEnv(func(k string) string { return tt.env[k] })
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStartOffIsNoop(t *testing.T) {
	tr, err := Start(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.Provider().Tracer("x").Start(context.Background(), "y")
	if span.IsRecording() {
		t.Error("a span records with tracing off")
	}
	if err := tr.Flush(context.Background()); err != nil {
		t.Errorf("Flush off: %v", err)
	}
}

// TestEncodeIsOTLP decodes what Encode writes with the official generated OTLP types.
func TestEncodeIsOTLP(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	h := map[string][]string{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, "Tracestate": {"vendor=x"}}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h))
	ctx, root := tp.Tracer("scope-a").Start(ctx, "root", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("s", "v"), attribute.Int("i", -3), attribute.Float64("f", 0.5), attribute.Bool("b", false),
		attribute.StringSlice("ss", []string{"x", "y"}), attribute.Int64Slice("is", []int64{1, 2})))
	_, child := tp.Tracer("scope-b").Start(ctx, "child")
	child.AddEvent("ev", trace.WithAttributes(attribute.String("k", "v")))
	child.SetStatus(codes.Error, "boom")
	child.End()
	root.SetStatus(codes.Ok, "")
	root.End()

	var td tracepb.TracesData
	if err := proto.Unmarshal(Encode(rec.Ended()), &td); err != nil {
		t.Fatalf("not an OTLP TracesData: %v", err)
	}
	if len(td.ResourceSpans) != 1 || len(td.ResourceSpans[0].ScopeSpans) != 2 {
		t.Fatalf("want one resource with two scopes, got %v", &td)
	}
	got := map[string]*tracepb.Span{}
	for _, ss := range td.ResourceSpans[0].ScopeSpans {
		for _, s := range ss.Spans {
			got[ss.Scope.Name+"/"+s.Name] = s
		}
	}
	r, c := got["scope-a/root"], got["scope-b/child"]
	if r == nil || c == nil {
		t.Fatalf("spans %v", got)
	}
	if hex.EncodeToString(r.TraceId) != "4bf92f3577b34da6a3ce929d0e0e4736" || hex.EncodeToString(r.ParentSpanId) != "00f067aa0ba902b7" ||
		r.TraceState != "vendor=x" || r.Flags != 0x301 || r.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("root ids, state, flags or kind: %v", r)
	}
	if string(c.ParentSpanId) != string(r.SpanId) || c.Flags != 0x101 || c.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Errorf("child's parent, flags or kind: %v", c)
	}
	attrs := map[string]string{}
	for _, kv := range r.Attributes {
		attrs[kv.Key] = kv.Value.String()
	}
	want := map[string]string{"s": `string_value:"v"`, "i": `int_value:-3`, "f": `double_value:0.5`, "b": `bool_value:false`,
		"ss": `array_value:{values:{string_value:"x"} values:{string_value:"y"}}`, "is": `array_value:{values:{int_value:1} values:{int_value:2}}`}
	for k := range attrs { // the text format's spacing is not stable: compare it normalised
		attrs[k] = normalise(attrs[k])
		want[k] = normalise(want[k])
	}
	if diff := cmp.Diff(want, attrs); diff != "" {
		t.Errorf("attributes (-want +got):\n%s", diff)
	}
	if r.Status.GetCode() != tracepb.Status_STATUS_CODE_OK || c.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || c.Status.GetMessage() != "boom" {
		t.Errorf("statuses %v %v", r.Status, c.Status)
	}
	if len(c.Events) != 1 || c.Events[0].Name != "ev" || c.Events[0].Attributes[0].Value.GetStringValue() != "v" {
		t.Errorf("events %v", c.Events)
	}
	if r.StartTimeUnixNano == 0 || r.EndTimeUnixNano < r.StartTimeUnixNano {
		t.Errorf("times %d..%d", r.StartTimeUnixNano, r.EndTimeUnixNano)
	}
}

func normalise(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r != ' ' && r != '\u00a0' {
			out = append(out, r)
		}
	}
	return string(out)
}

// TestFlushBounded: a flush to an endpoint that does not answer gives up after FlushWait with
// an error, rather than holding the run's end for the export's whole timeout.
func TestFlushBounded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	t.Cleanup(func() { close(release); srv.Close() })
	tr, err := Start(context.Background(), Config{Endpoint: srv.URL + "/v1/traces", Timeout: time.Minute, FlushWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.Provider().Tracer("x").Start(context.Background(), "y")
	span.End()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a cancelled run flushes all the same
	done := make(chan error, 1)
	go func() { done <- tr.Flush(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Flush = %v, want the flush's deadline", err)
		}
	case <-time.After(30 * time.Second): // far beyond FlushWait, far below Timeout
		t.Fatal("Flush waited for the export's timeout, not FlushWait")
	}
}
