package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/shared/domain"
)

// maxResourceText caps the text of one embedded resource inside a result.
const maxResourceText = 2 << 10

// render makes a tool result text for the model: text content joined by blank lines, images,
// audio and resources summarised, structured content as JSON when there is no text, capped at
// max bytes. Header values the server echoes are redacted before the text is cut.
func render(res *sdk.CallToolResult, max int, red *redactor) *domain.MCPResult {
	var parts []string
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			hasText = true
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, resourceLink(c))
		case *sdk.EmbeddedResource:
			parts = append(parts, embedded(c.Resource, red))
		default:
			parts = append(parts, fmt.Sprintf("[%T content, not shown]", c))
		}
	}
	if !hasText && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append([]string{string(b)}, parts...)
		}
	}
	text, truncated := capText(red.text(strings.Join(parts, "\n\n")), max)
	return &domain.MCPResult{Text: text, IsError: res.IsError, Truncated: truncated}
}

func resourceLink(c *sdk.ResourceLink) string {
	s := "[resource link: " + c.URI
	if c.MIMEType != "" {
		s += ", " + c.MIMEType
	}
	if c.Name != "" {
		s += ", " + c.Name
	}
	if c.Description != "" {
		s += ": " + c.Description
	}
	return s + "]"
}

func embedded(r *sdk.ResourceContents, red *redactor) string {
	if r == nil {
		return "[resource: empty]"
	}
	head := "[resource: " + r.URI
	if r.MIMEType != "" {
		head += ", " + r.MIMEType
	}
	if r.Text == "" {
		return fmt.Sprintf("%s, %d bytes]", head, len(r.Blob))
	}
	text, cut := capText(red.text(r.Text), maxResourceText)
	if cut {
		text += fmt.Sprintf("\n[the resource's text is cut at %d bytes]", maxResourceText)
	}
	return head + "]\n" + text
}

func orUnknown(mimeType string) string {
	if mimeType == "" {
		return "unknown type"
	}
	return mimeType
}

// capText cuts s to at most max bytes at a character boundary.
func capText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}

// tool converts a tools/list entry, header values redacted; an input schema the server leaves
// out is an empty object.
func tool(t *sdk.Tool, red *redactor) domain.MCPTool {
	schema, ok := t.InputSchema.(map[string]any)
	if !ok && t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil {
			_ = json.Unmarshal(b, &schema) // not an object: the empty schema below
		}
	}
	if schema == nil {
		schema = map[string]any{"type": "object"}
	}
	schema, _ = red.value(schema).(map[string]any)
	return domain.MCPTool{Name: red.text(t.Name), Description: red.text(t.Description), InputSchema: schema}
}
