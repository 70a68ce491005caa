package main

import (
	"context"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
)

// acceptAsIs is a person who accepts every form as the server filled it in: the empty form,
// which the connector completes with the requested schema's defaults.
type acceptAsIs struct{}

func (acceptAsIs) Elicit(context.Context, domain.Elicitation) domain.ElicitAnswer {
	return domain.ElicitAnswer{Action: domain.ElicitAccept}
}

// elicitDefaults runs elicitation-sep1034-client-defaults: the server's tool asks for a form
// whose every field has a default, the person accepts it as it is, and the server checks that
// each default came back (MCP 2025-11-25, SEP-1034).
func elicitDefaults(ctx context.Context, c *mcp.Connector, ep domain.MCPEndpoint) error {
	s, err := c.Connect(ctx, ep)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = s.Close() }() // the result is in; a failed goodbye changes nothing
	res, err := s.CallTool(domain.WithElicitor(ctx, acceptAsIs{}), "test_client_elicitation_defaults", nil)
	if err != nil {
		return fmt.Errorf("call test_client_elicitation_defaults: %w", err)
	}
	if res.IsError {
		return fmt.Errorf("test_client_elicitation_defaults answered an error: %s", res.Text)
	}
	fmt.Println("test_client_elicitation_defaults:", res.Text)
	return nil
}
