package bedrock

import (
	"context"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
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
	turns := []domain.Turn{
		{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartText, Text: "write a haiku"}}},
		{Role: domain.RoleAssistant, Parts: []domain.Part{{Type: domain.PartText, Text: "draft"}}},
	}
	if _, err := New(c, Options{}).Converse(context.Background(), domain.ModelRequest{Turns: turns}); err != nil {
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
