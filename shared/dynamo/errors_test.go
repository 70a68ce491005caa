package dynamo

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/agentorch/agentorch/shared/domain"
)

// TestItemTooLarge: the ValidationExceptions DynamoDB answers for a record past its limits are
// request_too_large, however deeply wrapped; every other ValidationException stays an internal
// error (our defect), and the typed SDK errors keep their kinds.
func TestItemTooLarge(t *testing.T) {
	validation := func(msg string) error {
		return fmt.Errorf("operation error DynamoDB: UpdateItem: %w", &smithy.GenericAPIError{Code: "ValidationException", Message: msg})
	}
	for _, tc := range []struct {
		name string
		err  error
		want domain.Kind
	}{
		{"put item size", validation("Item size has exceeded the maximum allowed size"), domain.KindTooLarge},
		{"update item size", validation("Item size to update has exceeded the maximum allowed size"), domain.KindTooLarge},
		{"key size", validation("One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of 2048 bytes"), domain.KindTooLarge},
		{"bad expression", validation(`Invalid UpdateExpression: Syntax error; token: "=", near: "SET ="`), domain.KindInternal},
		{"wrong key type", validation("The provided key element does not match the schema"), domain.KindInternal},
		{"size in another code", fmt.Errorf("x: %w", &smithy.GenericAPIError{Code: "SerializationException", Message: "size"}), domain.KindInternal},
		{"throttling", &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate of requests exceeds the allowed throughput"}, domain.KindOverloaded},
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
}
