package dynamo_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

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
		got, _, err := svc.List(ctx, p, domain.AuditFilter{}, 0, 1)
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

	// StoredForm pins the item an entry is written as (its keys, ttl and data), so that entries
	// written now still read, and a list still finds them, after the code changes.
	t.Run("StoredForm", func(t *testing.T) {
		ctx := context.Background()
		at := time.Now().UTC().Truncate(time.Second).Add(-time.Hour + 5*time.Millisecond)
		e := &domain.AuditEntry{ID: "0b7d6c1e-2f4a-4e8b-9c3d-5a6b7c8d9e0f", Company: "coauditform", ActorKeyID: "k-1", ViaToken: true,
			Action: audit.MCPServerDeleted, TargetID: "s-1", CreatedAt: at, ExpiresAt: at.Add(audit.Retention)}
		if err := st.PutAuditEntry(ctx, e); err != nil {
			t.Fatal(err)
		}
		sk := at.Format("2006-01-02T15:04:05.000000000Z") + "#" + e.ID
		out, err := env.DynamoDB().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Config.Table), Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "CO#coauditform#AUDIT"}, "sk": &types.AttributeValueMemberS{Value: sk}}})
		if err != nil || out.Item == nil {
			t.Fatalf("get %s: %v, %v", sk, out, err)
		}
		str := func(k string) string { v, _ := out.Item[k].(*types.AttributeValueMemberS); return v.Value }
		got := map[string]string{"gsi1pk": str("gsi1pk"), "gsi1sk": str("gsi1sk"), "data": str("data"),
			"ttl": out.Item["ttl"].(*types.AttributeValueMemberN).Value}
		want := map[string]string{"gsi1pk": "CO#coauditform#AUDIT#mcp_server.deleted", "gsi1sk": sk,
			"ttl": strconv.FormatInt(at.Add(audit.Retention).Unix(), 10),
			"data": `{"id":"0b7d6c1e-2f4a-4e8b-9c3d-5a6b7c8d9e0f","company":"coauditform","actor_key_id":"k-1","via_token":true,` +
				`"action":"mcp_server.deleted","target_id":"s-1","created_at":"` + at.Format(time.RFC3339Nano) +
				`","expires_at":"` + at.Add(audit.Retention).Format(time.RFC3339Nano) + `"}`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("stored item (-want +got):\n%s", diff)
		}
	})
}
