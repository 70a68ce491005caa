// Package telemetry starts OpenTelemetry tracing for the functions that run agents (runtime,
// stream, worker and the dev server): an SDK tracer provider whose spans go over OTLP/HTTP to
// the endpoint the standard OTEL_EXPORTER_OTLP_* variables name. With no endpoint it starts
// nothing: instrumented code gets a no-op tracer, and no SDK state is built. Only the packages
// that wire those functions import it; the engine, the MCP client and the webhook delivery use
// the OpenTelemetry API alone (docs/observability.md).
package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// The environment variables the configuration is read from (the OpenTelemetry SDK's own names).
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvHeaders        = "OTEL_EXPORTER_OTLP_HEADERS"
	EnvTracesHeaders  = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	EnvTimeout        = "OTEL_EXPORTER_OTLP_TIMEOUT"
	EnvTracesTimeout  = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
	EnvTracesExporter = "OTEL_TRACES_EXPORTER"
	EnvServiceName    = "OTEL_SERVICE_NAME"
	// EnvCaptureContent opts in to message content (prompts, outputs, tool arguments and
	// results) in spans and prompts in execution events.
	EnvCaptureContent = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
	// lambdaFunctionName names the service when OTEL_SERVICE_NAME does not.
	lambdaFunctionName = "AWS_LAMBDA_FUNCTION_NAME"
)

// DefaultTimeout bounds one export, as the SDK's default (OTEL_EXPORTER_OTLP_TIMEOUT).
const DefaultTimeout = 10 * time.Second

// DefaultFlushWait bounds the flush at the end of a run: an endpoint that is slow or
// unreachable costs a run at most this, and its spans.
const DefaultFlushWait = 2 * time.Second

// Config is the tracing configuration of a process.
type Config struct {
	// Endpoint is the URL spans are POSTed to (…/v1/traces); "" turns tracing off.
	Endpoint string
	// Headers are sent with every export (an OTLP backend's API key, say). They are the
	// operator's, never a tenant's, and are never recorded.
	Headers map[string]string
	// Timeout bounds one export.
	Timeout time.Duration
	// FlushWait bounds Flush (DefaultFlushWait when zero; at most Timeout).
	FlushWait time.Duration
	// ServiceName is the service.name resource attribute.
	ServiceName string
	// CaptureContent records message content in spans (and prompts in execution events).
	CaptureContent bool
}

// Enabled says whether spans are exported.
func (c Config) Enabled() bool { return c.Endpoint != "" }

// FromEnv reads the configuration with getenv (os.Getenv): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is
// the traces URL as it is, OTEL_EXPORTER_OTLP_ENDPOINT a base that /v1/traces is appended to;
// with neither, or with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, tracing is off.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{Timeout: DefaultTimeout, ServiceName: getenv(EnvServiceName), CaptureContent: isTrue(getenv(EnvCaptureContent))}
	if c.ServiceName == "" {
		c.ServiceName = getenv(lambdaFunctionName)
	}
	if c.ServiceName == "" {
		c.ServiceName = "agentorch"
	}
	if isTrue(getenv(EnvSDKDisabled)) || strings.EqualFold(strings.TrimSpace(getenv(EnvTracesExporter)), "none") {
		return c, nil
	}
	switch traces, base := strings.TrimSpace(getenv(EnvTracesEndpoint)), strings.TrimSpace(getenv(EnvEndpoint)); {
	case traces != "":
		c.Endpoint = traces
	case base != "":
		c.Endpoint = strings.TrimRight(base, "/") + "/v1/traces"
	default:
		return c, nil
	}
	if u, err := url.Parse(c.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Config{}, fmt.Errorf("%s: %q is not an http(s) URL", EnvEndpoint, c.Endpoint)
	}
	var err error
	if c.Headers, err = parseHeaders(getenv(EnvHeaders), getenv(EnvTracesHeaders)); err != nil {
		return Config{}, err
	}
	for _, name := range []string{EnvTimeout, EnvTracesTimeout} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				return Config{}, fmt.Errorf("%s: %q is not a positive number of milliseconds", name, v)
			}
			c.Timeout = time.Duration(ms) * time.Millisecond
		}
	}
	return c, nil
}

func isTrue(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }

// parseHeaders reads the W3C-baggage-like header lists of the OTLP exporter variables
// ("key=value,key2=value2", values URL-encoded); the traces list overrides the general one.
func parseHeaders(lists ...string) (map[string]string, error) {
	h := map[string]string{}
	for _, list := range lists {
		for _, kv := range strings.Split(list, ",") {
			if strings.TrimSpace(kv) == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return nil, fmt.Errorf("%s: an entry is not key=value", EnvHeaders)
			}
			val, err := url.PathUnescape(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("%s: the value of %s is not URL-encoded", EnvHeaders, k)
			}
			h[k] = val
		}
	}
	return h, nil
}

// Tracing is a started tracer provider: a no-op one when tracing is off.
type Tracing struct {
	Config Config
	sdk    *sdktrace.TracerProvider // nil when off
}

// Start builds the tracer provider cfg describes; it makes no network call (spans are sent in
// batches, and by Flush). Off, it returns a Tracing whose provider is a no-op.
func Start(ctx context.Context, cfg Config) (*Tracing, error) {
	t := &Tracing{Config: cfg}
	if !cfg.Enabled() {
		return t, nil
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", cfg.ServiceName)))
	if err != nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	exp := NewExporter(cfg.Endpoint, cfg.Headers, cfg.Timeout)
	t.sdk = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return t, nil
}

// Provider is the tracer provider instrumented code takes.
func (t *Tracing) Provider() trace.TracerProvider {
	if t == nil || t.sdk == nil {
		return noop.NewTracerProvider()
	}
	return t.sdk
}

// Flush exports the spans ended so far and waits for it, within FlushWait, even when ctx has
// ended (a cancelled run's spans are sent too). A Lambda function calls it before an invocation
// returns: a frozen process sends nothing, and a batch left behind may never be sent. A no-op
// when off.
func (t *Tracing) Flush(ctx context.Context) error {
	if t == nil || t.sdk == nil {
		return nil
	}
	wait := t.Config.FlushWait
	if wait <= 0 {
		wait = DefaultFlushWait
	}
	if t.Config.Timeout > 0 {
		wait = min(wait, t.Config.Timeout)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
	defer cancel()
	return t.sdk.ForceFlush(ctx)
}

// Shutdown flushes and stops the provider (the dev server on exit; tests).
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.sdk == nil {
		return nil
	}
	return t.sdk.Shutdown(ctx)
}
