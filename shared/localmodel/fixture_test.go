package localmodel_test

import "github.com/agentorch/agentorch/shared/domain"

// The JSON of testdata/cases.json: turns, parts and usage with the keys the fixture is written
// in (domain's model types carry no JSON tags).

type caseTurn struct {
	Role  string     `json:"role"`
	Parts []casePart `json:"parts"`
}

type casePart struct {
	Type     string     `json:"type"`
	Text     string     `json:"text"`
	Image    *caseMedia `json:"image"`
	Document *caseMedia `json:"document"`
	ToolUse  *struct {
		ID    string         `json:"id"`
		Name  string         `json:"name"`
		Input map[string]any `json:"input"`
	} `json:"tool_use"`
	ToolResult *struct {
		ToolUseID string `json:"tool_use_id"`
		Content   string `json:"content"`
		IsError   bool   `json:"is_error"`
	} `json:"tool_result"`
}

type caseMedia struct {
	Format string `json:"format"`
	Name   string `json:"name"`
	Data   []byte `json:"data"`
}

type caseUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

func turns(ts []caseTurn) []domain.Turn {
	var out []domain.Turn
	for _, t := range ts {
		out = append(out, domain.Turn{Role: t.Role, Parts: parts(t.Parts)})
	}
	return out
}

func parts(ps []casePart) []domain.Part {
	var out []domain.Part
	for _, p := range ps {
		d := domain.Part{Type: p.Type, Text: p.Text}
		if p.Image != nil {
			d.Image = &domain.Media{Format: p.Image.Format, Name: p.Image.Name, Data: p.Image.Data}
		}
		if p.Document != nil {
			d.Document = &domain.Media{Format: p.Document.Format, Name: p.Document.Name, Data: p.Document.Data}
		}
		if u := p.ToolUse; u != nil {
			d.ToolUse = &domain.ToolUse{ID: u.ID, Name: u.Name, Input: u.Input}
		}
		if r := p.ToolResult; r != nil {
			d.ToolResult = &domain.ToolResult{ToolUseID: r.ToolUseID, Content: r.Content, IsError: r.IsError}
		}
		out = append(out, d)
	}
	return out
}
