package bedrock

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/agentorch/agentorch/shared/runtime"
)

type captureConverser struct{ in *bedrockruntime.ConverseInput }

func (c *captureConverser) Converse(_ context.Context, in *bedrockruntime.ConverseInput, _ ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	c.in = in
	return &bedrockruntime.ConverseOutput{
		Output:     &types.ConverseOutputMemberMessage{Value: types.Message{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "ok"}}}},
		StopReason: types.StopReasonEndTurn,
		Usage:      &types.TokenUsage{InputTokens: aws.Int32(1), OutputTokens: aws.Int32(1), TotalTokens: aws.Int32(2)},
	}, nil
}

// A graph node after the first sees the earlier output as a final assistant turn; the request
// must still end with a user turn, or Claude would continue that text instead of answering.
func TestTrailingAssistantTurnGetsAUserTurn(t *testing.T) {
	c := &captureConverser{}
	turns := []runtime.Turn{
		{Role: runtime.RoleUser, Parts: []runtime.Part{{Type: runtime.PartText, Text: "write a haiku"}}},
		{Role: runtime.RoleAssistant, Parts: []runtime.Part{{Type: runtime.PartText, Text: "draft"}}},
	}
	if _, err := New(c, Options{}).Converse(context.Background(), runtime.ModelRequest{Turns: turns}); err != nil {
		t.Fatal(err)
	}
	msgs := c.in.Messages
	if len(msgs) != 3 || msgs[2].Role != types.ConversationRoleUser {
		t.Fatalf("messages = %+v", msgs)
	}
	if len(turns) != 2 {
		t.Error("the caller's turns were changed")
	}
}
