package bedrock

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithydoc "github.com/aws/smithy-go/document"

	"github.com/agentorch/agentorch/shared/domain"
)

// buildInput maps a runtime request to a Converse request.
func buildInput(req domain.ModelRequest, defaultModel string) (*bedrockruntime.ConverseInput, error) {
	model := req.Model
	if model == "" {
		model = defaultModel
	}
	msgs, err := messages(req.Turns)
	if err != nil {
		return nil, err
	}
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: msgs}
	if req.System != "" {
		in.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: req.System}}
	}
	if req.MaxTokens > 0 || req.Temperature != nil || req.TopP != nil {
		cfg := &types.InferenceConfiguration{}
		if req.MaxTokens > 0 {
			cfg.MaxTokens = aws.Int32(int32(min(req.MaxTokens, 1<<31-1)))
		}
		if req.Temperature != nil {
			cfg.Temperature = aws.Float32(float32(*req.Temperature))
		}
		if req.TopP != nil {
			cfg.TopP = aws.Float32(float32(*req.TopP))
		}
		in.InferenceConfig = cfg
	}
	if len(req.Tools) > 0 {
		in.ToolConfig = toolConfig(req.Tools)
	}
	return in, nil
}

// messages maps turns to Converse messages, merging consecutive turns of one role because
// Converse requires the roles to alternate.
func messages(turns []domain.Turn) ([]types.Message, error) {
	var out []types.Message
	for i, t := range turns {
		var role types.ConversationRole
		switch t.Role {
		case domain.RoleUser:
			role = types.ConversationRoleUser
		case domain.RoleAssistant:
			role = types.ConversationRoleAssistant
		default:
			return nil, domain.Errorf(domain.KindInvalid, "turns[%d]: unknown role %q", i, t.Role)
		}
		var blocks []types.ContentBlock
		for j, p := range t.Parts {
			b, err := contentBlock(p)
			if err != nil {
				return nil, domain.Errorf(domain.KindInvalid, "turns[%d].parts[%d]: %s", i, j, err)
			}
			if b != nil {
				blocks = append(blocks, b)
			}
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, types.Message{Role: role, Content: blocks})
	}
	return out, nil
}

// contentBlock maps one part; it returns nil for parts Converse would reject as blank.
func contentBlock(p domain.Part) (types.ContentBlock, error) {
	switch p.Type {
	case domain.PartText:
		if strings.TrimSpace(p.Text) == "" {
			return nil, nil
		}
		return &types.ContentBlockMemberText{Value: p.Text}, nil
	case domain.PartImage:
		if p.Image == nil {
			return nil, fmt.Errorf("image part without an image")
		}
		format := types.ImageFormat(strings.ToLower(p.Image.Format))
		if format == "jpg" {
			format = types.ImageFormatJpeg
		}
		if !slices.Contains(format.Values(), format) {
			return nil, fmt.Errorf("image format %q is not one of png, jpeg, gif, webp", p.Image.Format)
		}
		return &types.ContentBlockMemberImage{Value: types.ImageBlock{
			Format: format,
			Source: &types.ImageSourceMemberBytes{Value: p.Image.Data},
		}}, nil
	case domain.PartDocument:
		if p.Document == nil {
			return nil, fmt.Errorf("document part without a document")
		}
		format := types.DocumentFormat(strings.ToLower(p.Document.Format))
		if !slices.Contains(format.Values(), format) {
			return nil, fmt.Errorf("document format %q is not supported", p.Document.Format)
		}
		return &types.ContentBlockMemberDocument{Value: types.DocumentBlock{
			Format: format,
			Name:   aws.String(documentName(p.Document.Name)),
			Source: &types.DocumentSourceMemberBytes{Value: p.Document.Data},
		}}, nil
	case domain.PartToolUse:
		if p.ToolUse == nil {
			return nil, fmt.Errorf("tool_use part without a tool use")
		}
		input := p.ToolUse.Input
		if input == nil {
			input = map[string]any{}
		}
		return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
			ToolUseId: aws.String(p.ToolUse.ID),
			Name:      aws.String(p.ToolUse.Name),
			Input:     document.NewLazyDocument(input),
		}}, nil
	case domain.PartToolResult:
		if p.ToolResult == nil {
			return nil, fmt.Errorf("tool_result part without a tool result")
		}
		return toolResult(p.ToolResult), nil
	}
	return nil, fmt.Errorf("unknown part type %q", p.Type)
}

// toolResult sends a result that is a JSON object as a json block, which models read as
// structure, and anything else as text.
func toolResult(r *domain.ToolResult) types.ContentBlock {
	text := r.Content
	if strings.TrimSpace(text) == "" {
		text = "(no output)" // Converse rejects blank text
	}
	var content types.ToolResultContentBlock = &types.ToolResultContentBlockMemberText{Value: text}
	var obj map[string]any
	if json.Unmarshal([]byte(r.Content), &obj) == nil && obj != nil {
		content = &types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(obj)}
	}
	status := types.ToolResultStatusSuccess
	if r.IsError {
		status = types.ToolResultStatusError
	}
	return &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
		ToolUseId: aws.String(r.ToolUseID),
		Status:    status,
		Content:   []types.ToolResultContentBlock{content},
	}}
}

// documentName fits a file name to Converse's rule for document names: letters, digits, single
// spaces, hyphens, parentheses and square brackets.
func documentName(name string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r == ' ', r == '-', r == '(', r == ')', r == '[', r == ']':
			return r
		}
		return '-'
	}, name)
	clean = strings.Join(strings.Fields(clean), " ")
	if clean == "" {
		return "document"
	}
	return clean
}

func toolConfig(tools []domain.ToolSpec) *types.ToolConfiguration {
	cfg := &types.ToolConfiguration{ToolChoice: &types.ToolChoiceMemberAuto{}}
	for _, t := range tools {
		schema := t.Schema
		if schema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		spec := types.ToolSpecification{
			Name:        aws.String(t.Name),
			InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)},
		}
		if t.Description != "" {
			spec.Description = aws.String(t.Description)
		}
		cfg.Tools = append(cfg.Tools, &types.ToolMemberToolSpec{Value: spec})
	}
	return cfg
}

// convertOutput maps a Converse response to the runtime's.
func convertOutput(out *bedrockruntime.ConverseOutput) (*domain.ModelResponse, error) {
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return nil, fmt.Errorf("bedrock converse: response carries no message (%T)", out.Output)
	}
	resp := &domain.ModelResponse{}
	for _, b := range msg.Value.Content {
		switch b := b.(type) {
		case *types.ContentBlockMemberText:
			resp.Parts = append(resp.Parts, domain.Part{Type: domain.PartText, Text: b.Value})
		case *types.ContentBlockMemberToolUse:
			input := map[string]any{}
			if b.Value.Input != nil {
				if err := b.Value.Input.UnmarshalSmithyDocument(&input); err != nil {
					return nil, fmt.Errorf("bedrock converse: tool input of %s: %w", aws.ToString(b.Value.Name), err)
				}
			}
			resp.Parts = append(resp.Parts, domain.Part{Type: domain.PartToolUse, ToolUse: &domain.ToolUse{
				ID:    aws.ToString(b.Value.ToolUseId),
				Name:  aws.ToString(b.Value.Name),
				Input: plainNumbers(input).(map[string]any),
			}})
		}
	}
	var err error
	if resp.StopReason, err = stopReason(out.StopReason); err != nil {
		return nil, err
	}
	if u := out.Usage; u != nil {
		resp.Usage = domain.Usage{InputTokens: int(aws.ToInt32(u.InputTokens)), OutputTokens: int(aws.ToInt32(u.OutputTokens))}
	}
	return resp, nil
}

// stopReason maps Converse stop reasons to the runtime's few.
func stopReason(r types.StopReason) (string, error) {
	switch r {
	case types.StopReasonToolUse:
		return domain.StopToolUse, nil
	case types.StopReasonMaxTokens, types.StopReasonModelContextWindowExceeded:
		return domain.StopMaxTokens, nil
	case types.StopReasonGuardrailIntervened, types.StopReasonContentFiltered:
		return domain.StopFiltered, nil
	case types.StopReasonMalformedModelOutput, types.StopReasonMalformedToolUse:
		return "", domain.Wrap(domain.KindInternal, fmt.Errorf("bedrock converse: stop reason %s", r),
			"The model produced malformed output")
	}
	return domain.StopEndTurn, nil // end_turn, stop_sequence and reasons this SDK does not know
}

// plainNumbers replaces the document.Number values the Smithy decoder produces with float64, so
// tool inputs look as encoding/json would decode them (and encode as numbers, not strings).
func plainNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = plainNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = plainNumbers(e)
		}
	case smithydoc.Number:
		if f, err := v.Float64(); err == nil {
			return f
		}
		return v.String()
	}
	return v
}
