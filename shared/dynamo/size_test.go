package dynamo

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
)

// TestItemSize: sizes worked out by hand from "DynamoDB item sizes and formats" (the name's
// UTF-8 bytes plus the value's: a string its UTF-8 bytes, a number 1 byte plus 1 per two
// significant digits rounded up, a binary its bytes, a boolean or null 1, a list or map 3 plus
// 1 per element plus the elements and their names). numberSize counts one byte more for an
// even run of digits and for a sign (its comment says why), which the cases show.
func TestItemSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		it   map[string]types.AttributeValue
		want int
	}{
		{"string", map[string]types.AttributeValue{"pk": stringAttr("abc")}, 2 + 3},
		{"utf-8", map[string]types.AttributeValue{"ü": stringAttr("é€")}, 2 + 2 + 3},
		{"odd digits", map[string]types.AttributeValue{"n": numberAttr(12345)}, 1 + 3 + 1},                                  // 5 digits: 3 + 1
		{"zeros trimmed", map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "1000"}}, 1 + 2},         // 1 digit: 1 + 1
		{"even digits", map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "0.0120"}}, 1 + 1 + 1 + 1}, // "12": 1 + 1, +1 for the pairs
		{"negative", map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "-7"}}, 1 + 1 + 1 + 1},        // "7": 1 + 1, +1 for the sign
		{"zero", map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "0"}}, 1 + 1},
		{"binary", map[string]types.AttributeValue{"b": &types.AttributeValueMemberB{Value: []byte{1, 2, 3, 4}}}, 1 + 4},
		{"bool and null", map[string]types.AttributeValue{"ok": &types.AttributeValueMemberBOOL{Value: true}, "x": &types.AttributeValueMemberNULL{Value: true}}, 2 + 1 + 1 + 1},
		{"empty map", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{}}, 1 + 3},
		// m: 3 + (1 + "a" + "xy") + (1 + "l" + [3 + (1 + N 7) + (1 + BOOL)]) = 3 + 4 + (2 + 3 + 3 + 2) = 17
		{"nested", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"a": stringAttr("xy"),
			"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{numberAttr(7), &types.AttributeValueMemberBOOL{}}},
		}}}, 1 + 17},
	} {
		if got := itemSize(tc.it); got != tc.want {
			t.Errorf("%s: itemSize = %d, want %d", tc.name, got, tc.want)
		}
	}
	if got, want := numberSize("-9223372036854775808"), 12; got != want || leaseRoom != 8+maxLeaseID+11+want+10+maxLeaseID {
		t.Errorf("an int64 takes %d bytes by numberSize, want %d (leaseRoom %d counts on it)", got, want, leaseRoom)
	}
}

// countingDB counts the writes that reach DynamoDB.
type countingDB struct {
	Client
	mu     sync.Mutex
	writes map[string]int
}

func (c *countingDB) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writes == nil {
		c.writes = map[string]int{}
	}
	c.writes[op]++
}

func (c *countingDB) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.writes
	c.writes = nil
	return w
}

func (c *countingDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.count("PutItem")
	return c.Client.PutItem(ctx, in, opts...)
}

func (c *countingDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.count("UpdateItem")
	return c.Client.UpdateItem(ctx, in, opts...)
}

func (c *countingDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.count("TransactWriteItems")
	return c.Client.TransactWriteItems(ctx, in, opts...)
}

func sizeStore(t *testing.T) (*Store, *countingDB) {
	env := localstack.NewTestEnv(t)
	db := &countingDB{Client: env.DynamoDB()}
	return NewStore(db, env.Config.Table), db
}

// TestItemLimitsAgainstDynamoDB: itemSize is not stricter than DynamoDB Local, nor laxer than
// the store needs: an item of every kind of value measured at exactly 400 KB is stored and
// read back whole, one byte more is refused as too large before any request; keys at their
// limits are stored, a byte more refused the same way, in a put and in a transaction.
func TestItemLimitsAgainstDynamoDB(t *testing.T) {
	st, db := sizeStore(t)
	ctx := context.Background()
	build := func(pk, sk string, size int) map[string]types.AttributeValue {
		it := itemKey(pk, sk)
		it["n"] = &types.AttributeValueMemberN{Value: "-123.4500"}
		it["big"] = numberAttr(9007199254740993)
		it["b"] = &types.AttributeValueMemberB{Value: []byte{0, 1, 2}}
		it["ok"] = &types.AttributeValueMemberBOOL{Value: true}
		it["m"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"é": stringAttr("ü€"), "l": &types.AttributeValueMemberL{Value: []types.AttributeValue{numberAttr(7), &types.AttributeValueMemberNULL{Value: true}}},
		}}
		it[attrData] = stringAttr("")
		it[attrData] = stringAttr(strings.Repeat("z", size-itemSize(it)))
		if got := itemSize(it); got != size {
			t.Fatalf("built an item of %d bytes, want %d", got, size)
		}
		return it
	}
	id := uuid.NewString()
	fits := build("SIZE#"+id, "X", maxItemBytes)
	if err := st.put(ctx, &dynamodb.PutItemInput{Item: fits}); err != nil {
		t.Fatalf("an item of exactly %d bytes: %v", maxItemBytes, err)
	}
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: itemKey("SIZE#"+id, "X"), ConsistentRead: aws.Bool(true)})
	if err != nil || itemSize(out.Item) != maxItemBytes {
		t.Fatalf("read back: %d bytes, %v", itemSize(out.Item), err)
	}
	db.reset()
	for _, tc := range []struct {
		name string
		it   map[string]types.AttributeValue
		ok   bool
	}{
		{"a byte over 400 KB", build("SIZE#"+uuid.NewString(), "X", maxItemBytes+1), false},
		{"partition key of 2048 bytes", itemKey(strings.Repeat("p", maxPartitionKeyBytes), "X"), true},
		{"partition key of 2049 bytes", itemKey(strings.Repeat("p", maxPartitionKeyBytes+1), "X"), false},
		{"sort key of 1024 bytes", itemKey("SIZE#"+uuid.NewString(), strings.Repeat("s", maxSortKeyBytes)), true},
		{"sort key of 1025 bytes", itemKey("SIZE#"+uuid.NewString(), strings.Repeat("s", maxSortKeyBytes+1)), false},
		{"gsi1 key of 2049 bytes", func() map[string]types.AttributeValue {
			it := itemKey("SIZE#"+uuid.NewString(), "X")
			it[attrGSI1PK], it[attrGSI1SK] = stringAttr(strings.Repeat("g", maxPartitionKeyBytes+1)), stringAttr("s")
			return it
		}(), false},
	} {
		err := st.put(ctx, &dynamodb.PutItemInput{Item: tc.it})
		terr := st.transact(ctx, []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String(st.table), Item: tc.it}}})
		sent := db.reset()
		switch {
		case tc.ok && (err != nil || terr != nil):
			t.Errorf("%s: %v, %v; want it stored", tc.name, err, terr)
		case !tc.ok && (domain.KindOf(err) != domain.KindTooLarge || domain.KindOf(terr) != domain.KindTooLarge):
			t.Errorf("%s: %v, %v; want too large", tc.name, err, terr)
		case !tc.ok && len(sent) != 0:
			t.Errorf("%s: sent %v, want the item refused before any request", tc.name, sent)
		}
	}
}

// TestOversizeRecords: the store's own writes refuse records past the limits as too large
// without a request: a file of 400 KB, an execution record, a file id past the key limit,
// and a session that would leave no room for its lease.
func TestOversizeRecords(t *testing.T) {
	st, db := sizeStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	file := func(id string, tags int) *domain.File {
		return &domain.File{ID: id, Company: "acme", Name: "a.txt", Tags: []string{strings.Repeat("t", tags)}, CreatedAt: now, UpdatedAt: now}
	}
	sess := &domain.Session{ID: uuid.NewString(), Owner: "alice", Company: "acme", Config: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	it, err := st.sessionItem(sess)
	if err != nil {
		t.Fatal(err)
	}
	sess.Name = strings.Repeat("s", maxItemBytes-itemSize(it)-leaseRoom-titleRoom+1) // one byte into the lease's and title's room
	for name, write := range map[string]func() error{
		"file over 400 KB":           func() error { return st.CreateFile(ctx, file(uuid.NewString(), maxItemBytes)) },
		"file id past the key limit": func() error { return st.CreateFile(ctx, file(strings.Repeat("f", maxPartitionKeyBytes), 1)) },
		"execution over 400 KB": func() error {
			return st.PutExecution(ctx, &domain.Execution{ID: uuid.NewString(), SessionID: uuid.NewString(), Error: strings.Repeat("e", maxItemBytes)})
		},
		"session without room for its lease and title": func() error { return st.CreateSession(ctx, sess) },
	} {
		if err := write(); domain.KindOf(err) != domain.KindTooLarge {
			t.Errorf("%s: %v, want too large", name, err)
		}
		if sent := db.reset(); len(sent) != 0 {
			t.Errorf("%s: sent %v, want nothing sent", name, sent)
		}
	}
	sess.Name = sess.Name[1:] // the lease's and title's room exactly free: stored, the lease taken, the longest title given
	if err := st.CreateSession(ctx, sess); err != nil {
		t.Fatalf("a session leaving room for its lease and title: %v", err)
	}
	p := domain.Principal{Company: "acme", Owner: "alice"}
	if _, err := st.AcquireRun(ctx, p, sess.ID, strings.Repeat("l", maxLeaseID), strings.Repeat("x", maxLeaseID), now.Add(time.Minute), now); err != nil {
		t.Errorf("taking the lease of a session at its size limit: %v", err)
	}
	longest := strings.Repeat("𝄞", domain.MaxSessionTitle) // 4 bytes a character
	if got, err := st.RenameSession(ctx, p, sess.ID, longest); err != nil || got.Title != longest {
		t.Errorf("the longest title on a leased session at its size limit: %v", err)
	}
}

// kbWith is a knowledge base of run run-1 with datasources of the given file ids.
func kbWith(files ...string) *domain.KnowledgeBase {
	now := time.Now().UTC()
	kb := &domain.KnowledgeBase{ID: uuid.NewString(), Company: "acme", Name: "kb", RunID: "run-1", CreatedAt: now, UpdatedAt: now,
		Sources: map[string]*domain.Datasource{}}
	for _, f := range files {
		kb.Sources[f] = &domain.Datasource{FileID: f, Name: f + ".txt", Status: domain.IngestPending}
	}
	return kb
}

// TestKBRoomAccount: datasources added one UpdateItem each grow a knowledge base until its
// room account refuses one as too large, with the item then still under 400 KB and within
// two datasources of it (the account is not much stricter than DynamoDB); a datasource over
// maxSourceBytes is refused before any request. Replacing a datasource credits the old one:
// a knowledge base at its limit still takes rewrites of its datasources that do not grow.
func TestKBRoomAccount(t *testing.T) {
	st, db := sizeStore(t)
	ctx := context.Background()
	kb := kbWith("a")
	if err := st.PutKB(ctx, kb); err != nil {
		t.Fatal(err)
	}
	big := func(id string) *domain.Datasource {
		d := &domain.Datasource{FileID: id, Status: domain.IngestFailed, Error: "x"}
		_, w, _ := sourceAttr(id, d)
		d.Error = strings.Repeat("x", 1+maxSourceBytes-w)
		return d
	}
	if _, w, _ := sourceAttr("z", big("z")); w != maxSourceBytes {
		t.Fatalf("big datasource weighs %d, want %d", w, maxSourceBytes)
	}
	db.reset()
	var added []string
	for i := 0; ; i++ {
		if i > 2*maxItemBytes/maxSourceBytes {
			t.Fatal("the room account never refused a datasource")
		}
		id := uuid.NewString()
		_, err := st.UpdateSource(ctx, kb.ID, "run-1", big(id))
		if domain.KindOf(err) == domain.KindTooLarge {
			break
		}
		if err != nil {
			t.Fatalf("datasource %d: %v", i, err)
		}
		added = append(added, id)
	}
	if n := db.reset(); n["UpdateItem"] != len(added)+1 || len(n) != 1 {
		t.Errorf("%d datasources added with %v, want one UpdateItem each and one refused", len(added), n)
	}
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: itemKey(kbPK(kb.ID), kbSK), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	size := itemSize(out.Item)
	if size > maxItemBytes || size < maxItemBytes-2*maxSourceBytes-roomReserve {
		t.Errorf("the refused knowledge base is %d bytes, want at most %d and within two datasources and the reserve of it", size, maxItemBytes)
	}
	got, err := decodeKB(out.Item)
	if err != nil || len(got.Sources) != len(added)+1 {
		t.Fatalf("record after the writes: %d datasources, %v", len(got.Sources), err)
	}
	// A rewrite of a datasource of the same size takes no room: accepted at the limit.
	if _, err := st.UpdateSource(ctx, kb.ID, "run-1", big(added[0])); err != nil {
		t.Errorf("rewriting a datasource at the limit: %v", err)
	}
	grown := &domain.Datasource{FileID: "a", Name: "a.txt", Status: domain.IngestIngested, ContentHash: strings.Repeat("c", 64)}
	if _, err := st.UpdateSource(ctx, kb.ID, "run-1", grown); domain.KindOf(err) != domain.KindTooLarge {
		t.Errorf("growing a datasource at the limit: %v, want too large", err)
	}
	huge := &domain.Datasource{FileID: uuid.NewString(), Status: domain.IngestFailed, Error: strings.Repeat("x", maxSourceBytes)}
	if _, err := st.UpdateSource(ctx, kb.ID, "run-1", huge); domain.KindOf(err) != domain.KindTooLarge {
		t.Errorf("a datasource over %d bytes: %v, want too large", maxSourceBytes, err)
	}
	if n := db.reset(); n["UpdateItem"] != 2 {
		t.Errorf("writes %v, want 2 UpdateItem (the oversize datasource refused before any request)", n)
	}
	// A full write opens the account again: a smaller record takes datasources again.
	small := kbWith("b")
	small.ID = kb.ID
	if err := st.UpdateKB(ctx, small, "run-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateSource(ctx, kb.ID, "run-1", big(uuid.NewString())); err != nil {
		t.Errorf("after a full write made room: %v", err)
	}
	if _, err := st.UpdateSource(ctx, kb.ID, "run-2", big(uuid.NewString())); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("another run: %v, want conflict", err)
	}
}

// TestKBWithoutRoomAccount: a knowledge base stored before the room account (datasources as
// strings, no counters) takes UpdateSource: the first rewrites it whole with the account open
// (an UpdateItem refused, a PutItem), the next are one UpdateItem again.
func TestKBWithoutRoomAccount(t *testing.T) {
	st, db := sizeStore(t)
	ctx := context.Background()
	kb := kbWith("a", "b")
	it, err := kbItem(kb)
	if err != nil {
		t.Fatal(err)
	}
	delete(it, attrRoomIn)
	delete(it, attrRoomOut)
	legacy := map[string]types.AttributeValue{}
	for id, v := range it[attrSources].(*types.AttributeValueMemberM).Value {
		js, _ := sourceJSON(v)
		legacy[id] = stringAttr(js)
	}
	it[attrSources] = &types.AttributeValueMemberM{Value: legacy}
	if _, err := st.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.table), Item: it}); err != nil {
		t.Fatal(err)
	}
	db.reset()
	d := &domain.Datasource{FileID: "a", Name: "a.txt", Status: domain.IngestIngested, Chunks: 3}
	got, err := st.UpdateSource(ctx, kb.ID, "run-1", d)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*domain.Datasource{"a": d, "b": kb.Sources["b"]}
	if diff := cmp.Diff(want, got.Sources); diff != "" {
		t.Errorf("datasources after the first write (-want +got):\n%s", diff)
	}
	if n := db.reset(); n["UpdateItem"] != 1 || n["PutItem"] != 1 || len(n) != 2 {
		t.Errorf("first write made %v, want 1 UpdateItem and 1 PutItem", n)
	}
	e := &domain.Datasource{FileID: "c", Name: "c.txt", Status: domain.IngestPending}
	got, err = st.UpdateSource(ctx, kb.ID, "run-1", e)
	if err != nil || len(got.Sources) != 3 {
		t.Fatalf("second write: %v, %v", got, err)
	}
	if n := db.reset(); n["UpdateItem"] != 1 || len(n) != 1 {
		t.Errorf("second write made %v, want 1 UpdateItem", n)
	}
}
