// Package telemetrytest runs the OpenTelemetry Collector's OTLP receiver in-process for tests:
// spans a test exports over OTLP/HTTP arrive decoded by the collector itself, not by this
// project's code. Only tests import it, so no function links the collector.
package telemetrytest

import (
	"context"
	"net"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// Receiver is a running OTLP receiver (HTTP only) and what it received.
type Receiver struct {
	// URL is where spans are POSTed (…/v1/traces).
	URL  string
	sink *consumertest.TracesSink
}

// Span is a received span, flattened for assertions.
type Span struct {
	Name, TraceID, SpanID, ParentID, Kind string
	Attrs                                 map[string]any
	Status                                string
}

// Start runs the receiver on a free loopback port until the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = addr
	sink := new(consumertest.TracesSink)
	r, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatalf("otlp receiver: %v", err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatalf("otlp receiver start: %v", err)
	}
	t.Cleanup(func() { _ = r.Shutdown(context.Background()) })
	return &Receiver{URL: "http://" + addr + "/v1/traces", sink: sink}
}

// Spans are the spans received so far, in the order they came.
func (r *Receiver) Spans() []Span {
	var out []Span
	for _, td := range r.sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				spans := ss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					out = append(out, flatten(spans.At(k)))
				}
			}
		}
	}
	return out
}

// Reset forgets the spans received.
func (r *Receiver) Reset() { r.sink.Reset() }

// WaitSpans waits up to limit for at least n spans.
func (r *Receiver) WaitSpans(t testing.TB, n int, limit time.Duration) []Span {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		spans := r.Spans()
		if len(spans) >= n || time.Now().After(deadline) {
			return spans
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func flatten(s ptrace.Span) Span {
	out := Span{Name: s.Name(), TraceID: s.TraceID().String(), SpanID: s.SpanID().String(), Kind: s.Kind().String(),
		Attrs: s.Attributes().AsRaw(), Status: s.Status().Code().String()}
	if p := s.ParentSpanID(); !p.IsEmpty() {
		out.ParentID = p.String()
	}
	return out
}
