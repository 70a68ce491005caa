package dynamo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
)

// The stored records of the tests below, as the code before the records had types of their own
// (when the domain types' JSON tags serialised the data attribute: b6ec295 for agents to keys,
// 8b971ad for files, collections and knowledge bases, 22710f6 for MCP servers) wrote them:
// testdata/stored/<name>.json holds each item's data attribute byte for byte. Items written
// then must still read, and the same values must still write the same bytes.

var (
	storedAt   = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
	storedLate = time.Date(2026, 3, 5, 1, 2, 3, 0, time.UTC)
)

func ptr[T any](v T) *T { return &v }

func storedAgent() *domain.Agent {
	return &domain.Agent{ID: "a-1", AgentKey: "support-bot", Name: "Support bot", Architecture: "single", EntryPoint: "main",
		IsPublic: true, IsShared: false, OriginURL: ptr("https://example.com/a"), Owner: "alice", Company: "acme",
		SystemConfig: map[string]any{"name": "Support bot", "agent_type": "llm_agent",
			"llm_config": map[string]any{"max_tokens": json.Number("4096"), "temperature": json.Number("0.2")},
			"tools":      []any{"search", map[string]any{"name": "x<y&z"}}},
		VersionNumber: "1.2.0", ConfigHash: "0123456789abcdef", CreatedAt: storedAt, UpdatedAt: storedLate,
		VersionID: "v-3", Explicit: map[string]any{"name": "Support bot", "tools": []any{"search"}}, Seq: 3}
}

func storedVersion() *domain.AgentVersion {
	return &domain.AgentVersion{ID: "v-3", AgentID: "a-1", VersionNumber: "1.2.0", Seq: 3,
		SystemConfig: map[string]any{"name": "Support bot", "n": json.Number("1.5e3")},
		// The keys sorted, as items were written before versions kept the client's order.
		SystemConfigJSON: json.RawMessage(`{"n":1.5e3,"name":"Support bot"}`),
		Metadata:         map[string]any{"created_by": "alice", "is_public": true}, CreatedAt: storedAt}
}

func storedFeedback() *domain.Feedback {
	return &domain.Feedback{ID: "f-1", MessageID: "m-1", SessionID: "s-1", User: "alice", Rating: ptr(-1), Comment: ptr("too long <b>"),
		CreatedAt: storedAt, UpdatedAt: storedLate}
}

func storedSession() *domain.Session {
	return &domain.Session{ID: "s-1", Name: "chat", Owner: "alice", Company: "acme",
		Config: map[string]any{"name": "inline", "llm_config": map[string]any{"max_tokens": json.Number("100")}}, ConfigHash: "fedcba9876543210",
		AgentID: "a-1", AgentName: "Support bot", Variables: map[string]any{"city": "Paris", "n": json.Number("2")},
		MessageCount: 4, VisibleCount: 2, Executions: 2, CreatedAt: storedAt, UpdatedAt: storedLate,
		Pending: &domain.PendingAction{Type: domain.PendingApproval, ExecutionID: "x-2", Input: "book it",
			ToolCalls: []domain.PendingToolCall{{ID: "c-1", Name: "book", Arguments: map[string]any{"when": "today"}, Node: "main",
				Kind: domain.ToolKindMCP, Server: "srv-1"}}, CreatedAt: storedLate}}
}

func storedMessage() *domain.Message {
	return &domain.Message{ID: "m-1", Seq: 2, Role: "assistant", Node: "main", Content: "Paris <3 & more", Visible: true, ExecutionID: "x-1",
		CreatedAt: storedAt,
		Citations: []domain.Citation{{Index: 1, KnowledgeBaseID: "kb-1", FileID: "file-1", FileName: "guide.pdf", ChunkIndex: 7, Score: 0.75, Text: "Paris is…"}},
		ToolCalls: []domain.PendingToolCall{{ID: "c-0", Name: "lookup", Arguments: map[string]any{"q": "weather"}, Kind: domain.ToolKindFunction}}}
}

func storedExecution() *domain.Execution {
	return &domain.Execution{ID: "x-2", SessionID: "s-1", CorrelationID: ptr("corr-9"), Status: domain.ExecRequiresAction,
		StopReason: "tool_use", Error: "", ErrorType: "",
		Events:      []map[string]any{{"type": "message", "content": "a<b"}, {"type": "usage", "input_tokens": json.Number("12")}},
		MessageIDs:  []string{"m-1", "m-2"},
		InputTokens: 12, OutputTokens: 34, DurationMS: 5678, CreatedAt: storedAt, CompletedAt: ptr(storedLate),
		Request:    map[string]any{"input": "book it", "stream": false},
		Scopes:     []string{domain.ScopeSessionsWrite, domain.ScopeApprovals},
		Pending:    &domain.PendingAction{Type: domain.PendingToolCalls, ExecutionID: "x-2", ToolCalls: []domain.PendingToolCall{{ID: "c-2", Name: "f", Arguments: map[string]any{}}}, Input: "hi", CreatedAt: storedLate},
		Checkpoint: []byte(`{"v":1,"state":"<x>"}`)}
}

func storedFile() *domain.File {
	return &domain.File{ID: "file-1", Company: "acme", Owner: "alice", Name: "guide <v2>.pdf", FileType: "document",
		MediaType: "application/pdf", Size: 12345, Status: domain.FileError, Tags: []string{"hr", "2026"}, ContentHash: "abc123",
		ObjectKey: "acme/file-1", Error: "could not read & parse", CreatedAt: storedAt, UpdatedAt: storedLate}
}

func storedCollection() *domain.Collection {
	return &domain.Collection{ID: "c-1", Company: "acme", Owner: "alice", Name: "HR", Description: "policies & more",
		FileIDs: []string{"file-1", "file-2"}, TotalSize: 99, CreatedAt: storedAt, UpdatedAt: storedLate}
}

func storedKB() *domain.KnowledgeBase {
	return &domain.KnowledgeBase{ID: "kb-1", Company: "acme", Owner: "alice", Name: "HR", Description: "d", Engine: domain.EngineOpenSearch,
		Collections: []string{"c-1"}, Files: []string{"file-1"},
		Chunking:  domain.Chunking{Strategy: "recursive", ChunkSize: 512, ChunkOverlap: 64, SplitBy: "token", RecursiveSeparators: []string{"\n\n", "."}},
		Embedding: domain.Embedding{Provider: "local", Model: "m", Dimensions: 384}, Index: "kb-local-384", Status: domain.KBRunning,
		Sources: map[string]*domain.Datasource{"file-1": {FileID: "file-1", Name: "guide <v2>.pdf", Status: domain.IngestRunning, Error: "e & f",
			ContentHash: "abc123", Chunks: 3, Attempts: 2, Phase: "embedding", TotalChunks: 10, ProcessedChunks: 4, Residue: true, UpdatedAt: ptr(storedLate)}},
		Metadata: domain.ProcessingMetadata{Phase: "embedding", TotalChunks: 10, ProcessedChunks: 4, Message: "m"},
		RunID:    "run-2", SourcesRun: "run-2", RunStarted: ptr(storedAt), RunDeadline: ptr(storedLate), Completed: ptr(storedAt),
		Error: "", StatusChanged: storedAt, CreatedAt: storedAt, UpdatedAt: storedLate}
}

func storedMCPServer() *domain.MCPServer {
	return &domain.MCPServer{ID: "mcp-1", Company: "acme", CreatedBy: "k-1", Name: "tickets", URL: "https://mcp.example.com/x?a=1&b=2",
		Description: "Tickets <prod>", HeaderNames: []string{"Authorization"}, SealedHeaders: []byte{1, 2, 3, 250}, TimeoutMS: 5000,
		Status: domain.MCPStatusError, LastError: "refused", ToolsAt: storedLate, CreatedAt: storedAt, UpdatedAt: storedLate,
		Tools: []domain.MCPTool{{Name: "open", Description: "Opens a ticket", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"title": map[string]any{"type": "string", "maxLength": json.Number("200")}}}},
			{Name: "close", InputSchema: map[string]any{"type": "object"}}}}
}

func storedKey() *domain.APIKey {
	return &domain.APIKey{ID: "k-1", Name: "ci", Prefix: "ak_abc", Hash: "h-abc", Owner: "alice", Company: "acme", ParentID: ptr("k-0"),
		Ancestors: []string{"k-0", "k-root"}, Scopes: []string{domain.ScopeAgentsRead}, RateLimit: 60,
		ExpiresAt: storedLate, RevokedAt: ptr(storedLate), CreatedAt: storedAt}
}

// storedCase is one record: its data as earlier code stored it, how the item is built now, and
// how the store reads it back.
type storedCase struct {
	name string
	want any
	item func() (map[string]types.AttributeValue, error)
	read func(ctx context.Context, st *dynamo.Store) (any, error)
	// source names the entry of the item's sources map (a knowledge base's datasources) held to
	// testdata/stored/<name>_source.json, if any.
	source string
}

func storedCases() []storedCase {
	return []storedCase{
		{name: "agent", want: storedAgent(), item: func() (map[string]types.AttributeValue, error) { return dynamo.AgentItem(storedAgent()) },
			read: func(ctx context.Context, st *dynamo.Store) (any, error) { return st.GetAgent(ctx, "a-1") }},
		{name: "version", want: storedVersion(), item: func() (map[string]types.AttributeValue, error) { return dynamo.VersionItem(storedVersion()) },
			read: func(ctx context.Context, st *dynamo.Store) (any, error) { return st.GetVersion(ctx, "a-1", 3) }},
		{name: "feedback", want: storedFeedback(), item: func() (map[string]types.AttributeValue, error) { return dynamo.FeedbackItem(storedFeedback()) },
			read: func(ctx context.Context, st *dynamo.Store) (any, error) {
				// Giving feedback again without rating or comment keeps the stored id, creation
				// time, rating and comment: the one read of a feedback record.
				return st.PutFeedback(ctx, &domain.Feedback{ID: "f-new", MessageID: "m-1", SessionID: "s-1", User: "alice", CreatedAt: storedLate, UpdatedAt: storedLate})
			}},
		{name: "session", want: storedSession(), item: func() (map[string]types.AttributeValue, error) { return dynamo.SessionItem(storedSession()) },
			read: func(ctx context.Context, st *dynamo.Store) (any, error) { return st.GetSession(ctx, "s-1") }},
		{name: "message", want: storedMessage(), item: func() (map[string]types.AttributeValue, error) { return dynamo.MessageItem("s-1", storedMessage()) },
			read: func(ctx context.Context, st *dynamo.Store) (any, error) {
				m, sid, err := st.FindMessage(ctx, "m-1")
				if err == nil && sid != "s-1" {
					return nil, fmt.Errorf("message found in session %q, want s-1", sid)
				}
				return m, err
			}},
		{name: "execution", want: storedExecution(), item: func() (map[string]types.AttributeValue, error) { return dynamo.ExecutionItem("s-1", storedExecution()) },
			read: func(ctx context.Context, st *dynamo.Store) (any, error) { return st.GetExecution(ctx, "s-1", "x-2") }},
		{name: "key", want: storedKey(), item: func() (map[string]types.AttributeValue, error) { return dynamo.KeyItem(storedKey()) },
			read: func(ctx context.Context, st *dynamo.Store) (any, error) { return st.GetKeyByHash(ctx, "h-abc") }},
		{name: "mcp_server", want: storedMCPServer(), item: func() (map[string]types.AttributeValue, error) { return dynamo.MCPItem(storedMCPServer()) },
			read: func(ctx context.Context, st *dynamo.Store) (any, error) { return st.GetMCPServer(ctx, "acme", "mcp-1") }},
		{name: "file", want: storedFile(), item: func() (map[string]types.AttributeValue, error) { return dynamo.FileItem(storedFile()) },
			read: func(ctx context.Context, st *dynamo.Store) (any, error) { return st.GetFile(ctx, "file-1") }},
		{name: "collection", want: storedCollection(), item: func() (map[string]types.AttributeValue, error) { return dynamo.CollectionItem(storedCollection()) },
			read: func(ctx context.Context, st *dynamo.Store) (any, error) { return st.GetCollection(ctx, "c-1") }},
		{name: "kb", want: storedKB(), item: func() (map[string]types.AttributeValue, error) { return dynamo.KBItem(storedKB()) },
			read: func(ctx context.Context, st *dynamo.Store) (any, error) { return st.GetKB(ctx, "kb-1") }, source: "file-1"},
	}
}

func storedData(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "stored", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStoredRecordsWriteUnchanged: the store writes each record with the bytes earlier code
// wrote for the same value, so renaming a field of an API view cannot rewrite stored items.
func TestStoredRecordsWriteUnchanged(t *testing.T) {
	for _, c := range storedCases() {
		t.Run(c.name, func(t *testing.T) {
			it, err := c.item()
			if err != nil {
				t.Fatal(err)
			}
			got := it["data"].(*types.AttributeValueMemberS).Value
			if diff := cmp.Diff(storedData(t, c.name), got); diff != "" {
				t.Errorf("data attribute (-before +now):\n%s", diff)
			}
			if c.source != "" {
				entry := sourceEntry(t, it, c.source)
				got := entry.Value[0].(*types.AttributeValueMemberS).Value
				if diff := cmp.Diff(storedData(t, c.name+"_source"), got); diff != "" {
					t.Errorf("sources entry %s (-before +now):\n%s", c.source, diff)
				}
			}
		})
	}
}

// TestStoredRecordsRead: items whose data earlier code wrote read back through the store as the
// domain values they were written from.
func TestStoredRecordsRead(t *testing.T) {
	env := localstack.NewTestEnv(t)
	db := env.DynamoDB()
	st := dynamo.NewStore(db, env.Config.Table)
	ctx := context.Background()
	for _, c := range storedCases() {
		t.Run(c.name, func(t *testing.T) {
			it, err := c.item()
			if err != nil {
				t.Fatal(err)
			}
			it["data"] = &types.AttributeValueMemberS{Value: storedData(t, c.name)}
			if c.source != "" {
				sourceEntry(t, it, c.source).Value[0] = &types.AttributeValueMemberS{Value: storedData(t, c.name+"_source")}
			}
			if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Config.Table), Item: it}); err != nil {
				t.Fatal(err)
			}
			got, err := c.read(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		})
	}
}

// sourceEntry is the entry of a knowledge base item's sources map for file id: [JSON, weight].
func sourceEntry(t *testing.T, it map[string]types.AttributeValue, id string) *types.AttributeValueMemberL {
	t.Helper()
	m, ok := it["sources"].(*types.AttributeValueMemberM)
	if !ok {
		t.Fatal("no sources map")
	}
	e, ok := m.Value[id].(*types.AttributeValueMemberL)
	if !ok || len(e.Value) == 0 {
		t.Fatalf("no sources entry %s", id)
	}
	return e
}
