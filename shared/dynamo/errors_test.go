package dynamo

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/agentorch/agentorch/shared/domain"
)

// TestItemTooLarge: translate recognises SDK errors by their types and codes, never by their
// text. DynamoDB never sees an item past its limits (checkItem, the room account of knowledge
// bases), so every ValidationException, whatever its message, is our defect and stays an
// internal error; the typed SDK errors keep their kinds, however deeply wrapped. The refusals
// of oversize records are KindTooLarge before any request (TestItemLimitsAgainstDynamoDB,
// TestKBRoomAccount).
func TestItemTooLarge(t *testing.T) {
	validation := func(msg string) error {
		return fmt.Errorf("operation error DynamoDB: UpdateItem: %w", &smithy.GenericAPIError{Code: "ValidationException", Message: msg})
	}
	for _, tc := range []struct {
		name string
		err  error
		want domain.Kind
	}{
		{"item size text", validation("Item size has exceeded the maximum allowed size"), domain.KindInternal},
		{"key size text", validation("One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of 2048 bytes"), domain.KindInternal},
		{"bad expression", validation(`Invalid UpdateExpression: Syntax error; token: "=", near: "SET ="`), domain.KindInternal},
		{"throttling", &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate of requests exceeds the allowed throughput"}, domain.KindOverloaded},
		{"throughput", fmt.Errorf("x: %w", &types.ProvisionedThroughputExceededException{}), domain.KindOverloaded},
		{"condition", fmt.Errorf("put: %w", &types.ConditionalCheckFailedException{Message: new(string)}), domain.KindConflict},
		{"plain", errors.New("connection reset"), domain.KindInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := translate(tc.err)
			if k := domain.KindOf(got); k != tc.want {
				t.Errorf("translate(%v) is %v, want %v", tc.err, k, tc.want)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("translate(%v) = %v lost the SDK error", tc.err, got)
			}
		})
	}
	tooLarge := fmt.Errorf("put file x: %w", errTooLarge("item", maxItemBytes+1, maxItemBytes))
	if got := translate(tooLarge); domain.KindOf(got) != domain.KindTooLarge {
		t.Errorf("translate(%v) is %v, want it kept too large", tooLarge, domain.KindOf(got))
	}
}
