package dynamo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
)

// orderedConfig is a configuration as a client wrote it: keys out of alphabetical order at
// every depth, a character encoding/json escapes in stored text (<) and numbers as sent.
const orderedConfig = `{"system_prompt":"Zebra <first>","name":"Ordered","llm_config":{"temperature":0.30,"provider":"local"},"tools":[{"z":1,"a":2}],"agent_type":"llm_agent"}`

func orderedDoc(t *testing.T, text string) domain.ConfigDoc {
	t.Helper()
	var d domain.ConfigDoc
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestVersionKeyOrder: a version's configuration reads back with its members in the order the
// client wrote them (GetVersion and ListVersions), in an item no larger than the sorted one of
// before (the configuration once, the same bytes placed differently); an item written before,
// its configuration stored as an object with sorted keys, still reads.
func TestVersionKeyOrder(t *testing.T) {
	env := localstack.NewTestEnv(t)
	db := env.DynamoDB()
	st := dynamo.NewStore(db, env.Config.Table)
	ctx := context.Background()

	doc := orderedDoc(t, orderedConfig)
	ordered, err := doc.OrderedJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(ordered) != orderedConfig {
		t.Fatalf("OrderedJSON %s, want the text as sent", ordered)
	}
	id := uuid.NewString()
	a := &domain.Agent{ID: id, AgentKey: "order-" + id, Name: "Ordered", Company: "co-order", Owner: "alice",
		SystemConfig: domain.Effective(doc.Object()), Explicit: doc.Object(), ConfigHash: doc.Hash(),
		VersionNumber: "1.0.0", VersionID: uuid.NewString(), Seq: 1, CreatedAt: storedAt, UpdatedAt: storedAt}
	v := &domain.AgentVersion{ID: a.VersionID, AgentID: id, VersionNumber: "1.0.0", Seq: 1, SystemConfig: doc.Object(),
		SystemConfigJSON: ordered, Metadata: map[string]any{"config_hash": a.ConfigHash}, CreatedAt: storedAt}
	if err := st.CreateAgent(ctx, a, v); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetVersion(ctx, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v, got); diff != "" {
		t.Errorf("GetVersion (-written +read):\n%s", diff)
	}
	list, _, err := st.ListVersions(ctx, id, 0, 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListVersions %v, %v", list, err)
	}
	if string(list[0].SystemConfigJSON) != orderedConfig {
		t.Errorf("ListVersions' configuration %s, want %s", list[0].SystemConfigJSON, orderedConfig)
	}
	if h := domain.ConfigDocOf(got.SystemConfig).Hash(); h != a.ConfigHash {
		t.Errorf("config hash of the read configuration %s, want %s", h, a.ConfigHash)
	}

	// The item holds the configuration once, in as many bytes as the sorted form took.
	withOrder, err := dynamo.VersionItem(v)
	if err != nil {
		t.Fatal(err)
	}
	sorted := *v
	sorted.SystemConfigJSON = nil
	withoutOrder, err := dynamo.VersionItem(&sorted)
	if err != nil {
		t.Fatal(err)
	}
	data := func(it map[string]types.AttributeValue) string {
		return it["data"].(*types.AttributeValueMemberS).Value
	}
	if len(withOrder) != len(withoutOrder) || len(data(withOrder)) != len(data(withoutOrder)) || data(withOrder) == data(withoutOrder) {
		t.Errorf("item with the order: %d attributes, data %d bytes; sorted: %d attributes, %d bytes (want the same sizes, other bytes)",
			len(withOrder), len(data(withOrder)), len(withoutOrder), len(data(withoutOrder)))
	}
	if n := bytes.Count([]byte(data(withOrder)), []byte("Zebra")); n != 1 {
		t.Errorf("the item holds the configuration %d times, want once: %s", n, data(withOrder))
	}

	// An item as written before: system_config an object with sorted keys and HTML escapes.
	oldID := uuid.NewString()
	old := `{"id":"v-old","agent":"` + oldID + `","version_number":"1.0.0",` +
		`"system_config":{"agent_type":"llm_agent","llm_config":{"provider":"local","temperature":0.30},"name":"Ordered","system_prompt":"Zebra \u003cfirst\u003e","tools":[{"a":2,"z":1}]},` +
		`"metadata":{"config_hash":"` + a.ConfigHash + `"},"seq":1,"created_at":"2026-03-04T05:06:07.123456789Z"}`
	it := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "AGENT#" + oldID}, "sk": &types.AttributeValueMemberS{Value: "V#00000001"},
		"data": &types.AttributeValueMemberS{Value: old},
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Config.Table), Item: it}); err != nil {
		t.Fatal(err)
	}
	gotOld, err := st.GetVersion(ctx, oldID, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantOld := `{"agent_type":"llm_agent","llm_config":{"provider":"local","temperature":0.30},"name":"Ordered","system_prompt":"Zebra <first>","tools":[{"a":2,"z":1}]}`
	if string(gotOld.SystemConfigJSON) != wantOld {
		t.Errorf("an old item's configuration %s, want %s", gotOld.SystemConfigJSON, wantOld)
	}
	if diff := cmp.Diff(doc.Object(), gotOld.SystemConfig); diff != "" {
		t.Errorf("an old item's configuration (-sent +read):\n%s", diff)
	}
}
