package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
)

// cimdURL is the Client ID Metadata Document URL the suite's auth/basic-cimd expects as the
// client_id where the authorization server supports such documents.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// suiteContext is what a scenario passes in MCP_CONFORMANCE_CONTEXT: pre-registered credentials.
type suiteContext struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	PrivateKey   string `json:"private_key_pem"` // auth/client-credentials-jwt's (ES256)
}

// authorized runs an auth/* scenario as the service meets an OAuth-protected server: the
// connection authorizes on the server's 401 (discovery, registration, the authorization code
// with PKCE through the authorization server's redirect, or client credentials), lists the
// tools and calls the first on a second connection with the same grant (step-up on a 403
// insufficient_scope, at most three authorizations).
func authorized(ctx context.Context, c *mcp.Connector, ep domain.MCPEndpoint, scenario, rawContext string) error {
	var sc suiteContext
	if rawContext != "" {
		if err := json.Unmarshal([]byte(rawContext), &sc); err != nil {
			return fmt.Errorf("read MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	o := mcp.NewOAuth(guard)
	flow := &mcp.Flow{OAuth: o, Fetch: o.FollowRedirect, Client: domain.MCPOAuthClient{
		ID: sc.ClientID, Secret: sc.ClientSecret, MetadataURL: cimdURL,
		RedirectURL: "http://localhost:3000/oauth/callback", Name: "agentorch conformance"}}
	switch scenario {
	case "auth/client-credentials-basic":
		flow.Grant = domain.MCPGrantClientCredentials
	case "auth/client-credentials-jwt":
		flow.Grant = domain.MCPGrantClientCredentials
		flow.Client.PrivateKey, flow.Client.AuthMethod = sc.PrivateKey, domain.MCPAuthMethodJWT
	}
	ep.Auth = flow
	tools, err := c.ListTools(ctx, ep)
	if err != nil {
		return fmt.Errorf("list tools: %w", err)
	}
	fmt.Printf("authorized; %d tools\n", len(tools))
	if len(tools) == 0 {
		return nil
	}
	s, err := c.Connect(ctx, ep)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = s.Close() }() // the result is in; a failed goodbye changes nothing
	res, err := s.CallTool(ctx, tools[0].Name, nil)
	if err != nil {
		return fmt.Errorf("call %s: %w", tools[0].Name, err)
	}
	fmt.Printf("%s: %s\n", tools[0].Name, res.Text)
	return nil
}
