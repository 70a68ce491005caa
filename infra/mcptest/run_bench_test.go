package mcptest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/mcp"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/tools"
)

// directory is one registered server, as mcpservers would give it to a run (its tools as
// tools/list read them).
type directory struct {
	srv *domain.MCPServer
	ep  domain.MCPEndpoint
}

func (d directory) Resolve(context.Context, string, []string) (domain.MCPServers, error) {
	return func(ref string) (*domain.MCPServer, bool) { return d.srv, ref == d.srv.Name }, nil
}

func (d directory) Endpoint(context.Context, *domain.MCPServer) (domain.MCPEndpoint, error) {
	return d.ep, nil
}

func (directory) RecordUse(context.Context, *domain.MCPServer, error) error { return nil }

// callsModel asks for echo `calls` times in one turn, then answers.
type callsModel struct{ calls int }

func (m callsModel) Converse(_ context.Context, req domain.ModelRequest) (*domain.ModelResponse, error) {
	last := req.Turns[len(req.Turns)-1]
	if len(last.Parts) > 0 && last.Parts[0].Type == domain.PartToolResult {
		return &domain.ModelResponse{Parts: []domain.Part{{Type: domain.PartText, Text: "done"}}, StopReason: domain.StopEndTurn}, nil
	}
	resp := &domain.ModelResponse{StopReason: domain.StopToolUse}
	for i := range m.calls {
		resp.Parts = append(resp.Parts, domain.Part{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{
			ID: fmt.Sprint("c", i), Name: "echo", Input: map[string]any{"message": "hello"}}})
	}
	return resp, nil
}

// BenchmarkMCPCallsInARun measures what a run adds to MCP calls: binding the server's tools,
// opening the run's one connection, checking each call's arguments against the tool's schema,
// the events, the model turns, against the same calls made on one open session directly. Each
// iteration is one run of 10 calls (run) or 10 calls on a session opened for them (direct).
func BenchmarkMCPCallsInARun(b *testing.B) {
	ctx := context.Background()
	base, stop, err := mcptest.Start(ctx, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	conn := mcp.ForPolicy(netguard.Policy{AllowHosts: []string{"127.0.0.1"}})
	ep := domain.MCPEndpoint{URL: base + mcptest.PathMCP}
	listed, err := conn.ListTools(ctx, ep)
	if err != nil {
		b.Fatal(err)
	}
	const calls = 10
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			s, err := conn.Connect(ctx, ep)
			if err != nil {
				b.Fatal(err)
			}
			for range calls {
				if _, err := s.CallTool(ctx, "echo", map[string]any{"message": "hello"}); err != nil {
					b.Fatal(err)
				}
			}
			_ = s.Close()
		}
	})
	b.Run("run", func(b *testing.B) {
		dir := directory{srv: &domain.MCPServer{ID: "s1", Name: "local", Tools: listed}, ep: ep}
		g, errs := domain.ParseConfig(map[string]any{"name": "m", "agent_type": "react_agent",
			"tools": []any{map[string]any{"type": "mcp", "server": "local", "allowed_tools": []any{"echo"}}}}, tools.NewRegistry(), "")
		if len(errs) > 0 {
			b.Fatal(errs)
		}
		e := engine.NewEngine(engine.ModelSet{Default: "m", ByName: map[string]domain.Model{"m": callsModel{calls}}}, nil,
			engine.Limits{MaxParallelTools: 1})
		events := 0
		for b.Loop() {
			run := tools.NewMCPRun(dir, conn)
			res, err := e.Run(ctx, engine.Run{Graph: g, Principal: domain.Principal{Company: "c"}, Tools: run,
				Input: []domain.Part{{Type: domain.PartText, Text: "go"}}, Emit: func(engine.Event) { events++ }})
			_ = run.Close()
			if err != nil || res.Messages[0].Content != "done" {
				b.Fatalf("%v %+v", err, res)
			}
		}
		b.ReportMetric(float64(events)/float64(b.N), "events/run")
	})
}
