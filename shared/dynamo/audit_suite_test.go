package dynamo_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/audit/audittest"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
)

// TestAuditStoreSuite holds the adapter to audit.Store's contract on DynamoDB Local: the suite
// the fake (audittest.Store) passes too. Its subtests share one table.
func TestAuditStoreSuite(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	audittest.StoreSuite(t, func(*testing.T) audit.Store { return st })

	// DynamoDB Local keeps expired items (it does not run TTL deletion), so what is tested is that
	// each entry carries the table's TTL attribute with its expiry in epoch seconds: 90 days after
	// it was recorded.
	t.Run("TTL", func(t *testing.T) {
		ctx := context.Background()
		svc := audit.New(st)
		before := time.Now()
		p := domain.Principal{KeyID: "k-ttl", Company: "coaudittl", Scopes: []string{domain.ScopeAdmin}}
		if err := svc.Record(ctx, p, audit.KeyCreated, "k-new"); err != nil {
			t.Fatal(err)
		}
		got, _, err := svc.List(ctx, p, audit.Filter{}, 0, 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("list = %v, %v", got, err)
		}
		out, err := env.DynamoDB().Query(ctx, &dynamodb.QueryInput{TableName: aws.String(env.Config.Table),
			KeyConditionExpression:    aws.String("pk = :p"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "CO#coaudittl#AUDIT"}}})
		if err != nil || len(out.Items) != 1 {
			t.Fatalf("raw query = %v, %v", out, err)
		}
		ttl, ok := out.Items[0]["ttl"].(*types.AttributeValueMemberN)
		if !ok {
			t.Fatalf("item has no numeric ttl: %v", out.Items[0])
		}
		want := got[0].CreatedAt.Add(90 * 24 * time.Hour).Unix()
		if ttl.Value != strconv.FormatInt(want, 10) {
			t.Errorf("ttl = %s, want %d (created %v + 90 days)", ttl.Value, want, got[0].CreatedAt)
		}
		if lo, hi := before.Add(90*24*time.Hour).Unix(), time.Now().Add(90*24*time.Hour).Unix(); want < lo || want > hi {
			t.Errorf("expiry %d outside [%d, %d]", want, lo, hi)
		}
	})
}
