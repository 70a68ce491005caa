// Package mcptest is a small MCP server of the tests' own, written with the official Go SDK,
// whose tools and paths produce the cases a client must survive: a slow tool, a failing tool,
// output over any cap, an image, a resource, structured content, a tools/list of several pages,
// the older HTTP+SSE transport, and answers that are not MCP at all. Tests start it with Start;
// `go run ./infra/mcptest/cmd -addr 127.0.0.1:PORT` serves it for people and other tests.
package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Paths of the server under its base URL.
const (
	PathMCP      = "/mcp"      // Streamable HTTP (answers in SSE streams)
	PathJSON     = "/json"     // Streamable HTTP answering plain application/json
	PathSSE      = "/sse"      // the older HTTP+SSE transport
	PathGarbage  = "/garbage"  // 200 application/json whose body is not JSON
	PathHTML     = "/html"     // 200 text/html, as a web page would answer
	PathNotFound = "/notfound" // 404
)

// PageSize is the tools/list page size; with the filler tools the list takes several pages.
const PageSize = 4

// FillerTools is how many tools named page-01, page-02 … the server adds to make pages.
const FillerTools = 9

// Tool names of the server.
var ToolNames = []string{"echo", "slow", "fail", "huge", "image", "resources", "structured"}

// NewServer returns the MCP server with its tools.
func NewServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "agentorch-mcptest", Version: "1.0.0"}, &sdk.ServerOptions{PageSize: PageSize})
	obj := func(props map[string]any, required ...string) map[string]any {
		m := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			m["required"] = required
		}
		return m
	}
	add := func(name, desc string, schema map[string]any, h func(ctx context.Context, args map[string]any) (*sdk.CallToolResult, error)) {
		s.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			args := map[string]any{}
			if len(req.Params.Arguments) > 0 {
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return nil, fmt.Errorf("arguments: %w", err)
				}
			}
			return h(ctx, args)
		})
	}
	text := func(s string) []sdk.Content { return []sdk.Content{&sdk.TextContent{Text: s}} }

	add("echo", "Echoes the message back.", obj(map[string]any{"message": map[string]any{"type": "string"}}, "message"),
		func(_ context.Context, args map[string]any) (*sdk.CallToolResult, error) {
			m, _ := args["message"].(string)
			return &sdk.CallToolResult{Content: text(m)}, nil
		})
	add("slow", "Sleeps for ms milliseconds (default 5000), then answers.", obj(map[string]any{"ms": map[string]any{"type": "number"}}),
		func(ctx context.Context, args map[string]any) (*sdk.CallToolResult, error) {
			ms, ok := args["ms"].(float64)
			if !ok {
				ms = 5000
			}
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &sdk.CallToolResult{Content: text(fmt.Sprintf("slept %gms", ms))}, nil
		})
	add("fail", "Always fails, as a tool error (isError).", obj(map[string]any{}),
		func(context.Context, map[string]any) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: text("the tool failed on purpose"), IsError: true}, nil
		})
	add("huge", "Answers bytes bytes of text (default 100000).", obj(map[string]any{"bytes": map[string]any{"type": "number"}}),
		func(_ context.Context, args map[string]any) (*sdk.CallToolResult, error) {
			n, ok := args["bytes"].(float64)
			if !ok {
				n = 100000
			}
			return &sdk.CallToolResult{Content: text(strings.Repeat("é", int(n)/2))}, nil
		})
	add("image", "Answers a small PNG image.", obj(map[string]any{}),
		func(context.Context, map[string]any) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: PNG}}}, nil
		})
	add("resources", "Answers text, a resource link, an embedded resource and audio.", obj(map[string]any{}),
		func(context.Context, map[string]any) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "see these"},
				&sdk.ResourceLink{URI: "file:///docs/readme.md", Name: "readme", MIMEType: "text/markdown"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://note", MIMEType: "text/plain", Text: "a note"}},
				&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF0000WAVE")},
			}}, nil
		})
	add("structured", "Answers structured content only.", obj(map[string]any{}),
		func(context.Context, map[string]any) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"sum": 3, "ok": true}}, nil
		})
	for i := 1; i <= FillerTools; i++ {
		add(fmt.Sprintf("page-%02d", i), "A filler tool that makes tools/list take several pages.", obj(map[string]any{}),
			func(context.Context, map[string]any) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: text("filler")}, nil
			})
	}
	return s
}

// PNG is the image the image tool answers (a 1×1 PNG).
var PNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// Handler serves every path of the server.
func Handler() http.Handler {
	srv := NewServer()
	get := func(*http.Request) *sdk.Server { return srv }
	mux := http.NewServeMux()
	mux.Handle(PathMCP, sdk.NewStreamableHTTPHandler(get, nil))
	mux.Handle(PathJSON, sdk.NewStreamableHTTPHandler(get, &sdk.StreamableHTTPOptions{JSONResponse: true}))
	mux.Handle(PathSSE, sdk.NewSSEHandler(get, nil))
	asker := NewElicitServer()
	mux.Handle(PathElicit, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return asker }, nil))
	mux.HandleFunc(PathGarbage, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "this is {not json")
	})
	mux.HandleFunc(PathHTML, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><html><body><h1>Welcome</h1></body></html>")
	})
	mux.HandleFunc(PathNotFound, http.NotFound)
	return mux
}

// Start serves the server on addr ("127.0.0.1:0" picks a free port) until stop is called or
// ctx ends. base is "http://host:port"; the paths above follow it.
func Start(ctx context.Context, addr string) (base string, stop func(), err error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("mcptest: listen %s: %w", addr, err)
	}
	hs := &http.Server{Handler: Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		<-ctx.Done()
		_ = hs.Close() // a test server: open streams are cut, nothing to keep
	}()
	stop = func() {
		cancel()
		<-done
	}
	return "http://" + ln.Addr().String(), stop, nil
}
