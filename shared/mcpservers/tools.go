package mcpservers

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode"

	"github.com/agentorch/agentorch/shared/domain"
)

// Bounds of the tools one server may offer. A server past one is not registered (400) and a
// refresh that finds it past one sets status error with the reason, keeping the tools last read.
const (
	// MaxToolsPerServer bounds the tools of one server: every run that binds the server sends
	// them all to the model (unless allowed_tools narrows them), and models take a few hundred.
	MaxToolsPerServer = 200
	// MaxToolsBytes bounds the JSON of a server's tools as the record keeps them (DynamoDB's
	// items hold 400 KB).
	MaxToolsBytes = 300_000
	// MaxToolNameLength bounds a tool's name as a server lists it (models take 64).
	MaxToolNameLength = 128
)

// toolsProblem says why a server's tools/list cannot be kept, or "" when it can: too many or too
// large, a name that is empty, too long, or holds control or format characters (which would
// reach the studio, logs and the model's tool list unseen), or a name listed twice (a binding
// could never tell the two apart).
func toolsProblem(tools []domain.MCPTool) string {
	if len(tools) > MaxToolsPerServer {
		return fmt.Sprintf("the server lists %d tools, more than the %d a server may offer", len(tools), MaxToolsPerServer)
	}
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		switch {
		case t.Name == "":
			return fmt.Sprintf("the server's tool %d has no name", i)
		case len(t.Name) > MaxToolNameLength:
			return fmt.Sprintf("the server's tool %d has a name longer than %d bytes", i, MaxToolNameLength)
		case hasHiddenChars(t.Name):
			return fmt.Sprintf("the server's tool %d has a name with control or format characters (%s)", i, strconv.QuoteToASCII(domain.Clip(t.Name, 64)))
		case seen[t.Name]:
			return fmt.Sprintf("the server lists the tool %q twice", domain.Clip(t.Name, 64))
		}
		seen[t.Name] = true
	}
	if b, err := json.Marshal(storedTools(tools)); err != nil || len(b) > MaxToolsBytes {
		return fmt.Sprintf("the server's tools take more than %d bytes", MaxToolsBytes)
	}
	return ""
}

// hasHiddenChars reports a control (Cc) or format (Cf: bidi controls, zero-width characters)
// character, or invalid UTF-8.
func hasHiddenChars(s string) bool {
	for _, r := range s {
		if r == unicode.ReplacementChar || unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) {
			return true
		}
	}
	return false
}

// storedTool is a tool in the JSON the store keeps it as (dynamo's mcpToolRecord), which
// MaxToolsBytes bounds.
type storedTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"input_schema"`
}

func storedTools(tools []domain.MCPTool) []storedTool {
	out := make([]storedTool, len(tools))
	for i, t := range tools {
		out[i] = storedTool(t)
	}
	return out
}
