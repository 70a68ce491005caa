package dynamo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
)

func TestMain(m *testing.M) { localstack.RunTests(m) }

// newSession stores a session of alice's with its lease taken, and returns it with the lease.
func newSession(t *testing.T, st *dynamo.Store) (*domain.Session, string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	sess := &domain.Session{ID: uuid.NewString(), Name: "s", Owner: "alice", Company: "acme", Config: map[string]any{"name": "s"},
		Variables: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	if err := st.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	lease := uuid.NewString()
	got, err := st.AcquireSession(ctx, domain.Principal{Owner: "alice", Company: "acme"}, sess.ID, lease, now.Add(time.Minute), now)
	if err != nil {
		t.Fatal(err)
	}
	return got, lease
}

// commit stores messages of the given contents in one execution and takes the lease again.
func commit(t *testing.T, st *dynamo.Store, sess *domain.Session, lease string, contents ...string) {
	t.Helper()
	ctx := context.Background()
	execID := uuid.NewString()
	var msgs []domain.Message
	for _, c := range contents {
		sess.MessageCount++
		msgs = append(msgs, domain.Message{ID: uuid.NewString(), Seq: sess.MessageCount, Role: "user", Content: c, Visible: true,
			ExecutionID: execID, CreatedAt: time.Now().UTC()})
	}
	exec := &domain.Execution{ID: execID, SessionID: sess.ID, Status: domain.ExecCompleted, Events: []map[string]any{}, CreatedAt: time.Now().UTC()}
	if err := st.Commit(ctx, domain.Commit{Session: sess, LeaseID: lease, Messages: msgs, Execution: exec}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := st.AcquireSession(ctx, domain.Principal{Owner: "alice", Company: "acme"}, sess.ID, lease, now.Add(time.Minute), now); err != nil {
		t.Fatal(err)
	}
}

// TestMessageItemsHoldAnyText stores texts that JSON would enlarge up to six times, each near
// the size DynamoDB allows for an item, and reads them back by every path.
func TestMessageItemsHoldAnyText(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	sess, lease := newSession(t, st)
	texts := []string{strings.Repeat("<>&", 100_000), strings.Repeat("\"\\\n", 100_000), strings.Repeat("\x01", 300_000)}
	commit(t, st, sess, lease, texts...)
	got, err := st.History(context.Background(), sess.ID, func(domain.Message) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	page, _, err := st.Messages(context.Background(), sess.ID, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) || len(page) != len(texts) {
		t.Fatalf("history %d, page %d messages; want %d", len(got), len(page), len(texts))
	}
	for i, want := range texts {
		if got[i].Content != want || page[i].Content != want {
			t.Errorf("message %d changed in storage", i)
		}
	}
	m, sid, err := st.FindMessage(context.Background(), got[1].ID)
	if err != nil || sid != sess.ID || m.Content != texts[1] {
		t.Errorf("FindMessage: %v, session %s", err, sid)
	}
}

// TestHistoryPages reads a history larger than one Query page (1 MB), newest first, and stops
// reading where take says.
func TestHistoryPages(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	sess, lease := newSession(t, st)
	var want []string
	for i := 0; i < 4; i++ {
		var batch []string
		for j := 0; j < 3; j++ {
			batch = append(batch, fmt.Sprintf("%02d %s", len(want)+len(batch), strings.Repeat("m", 200_000)))
		}
		commit(t, st, sess, lease, batch...)
		want = append(want, batch...)
	}
	for _, n := range []int{1, 5, 12} {
		seen := 0
		got, err := st.History(context.Background(), sess.ID, func(domain.Message) bool { seen++; return seen <= n })
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("take %d: got %d messages", n, len(got))
		}
		for i, m := range got {
			if m.Content != want[len(want)-n+i] {
				t.Errorf("take %d: message %d is %.2s, want %.2s", n, i, m.Content, want[len(want)-n+i])
			}
		}
	}
}

// TestEachExecutionReadsInPages: a session's executions come in creation order (their ids are
// UUIDv7) a page of at most ten at a time, and a caller that stops early reads no further page.
func TestEachExecutionReadsInPages(t *testing.T) {
	env := localstack.NewTestEnv(t)
	counted := &capacityClient{Client: env.DynamoDB()}
	st := dynamo.NewStore(counted, env.Config.Table)
	ctx := context.Background()
	sess, _ := newSession(t, st)
	var ids []string
	for range 25 {
		id := uuid.Must(uuid.NewV7()).String()
		e := &domain.Execution{ID: id, SessionID: sess.ID, Status: domain.ExecCompleted, Events: []map[string]any{{"type": "x"}}, CreatedAt: time.Now().UTC()}
		if err := st.PutExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, tt := range []struct{ take, reads, items int }{{1, 1, 10}, {10, 1, 10}, {11, 2, 20}, {25, 3, 25}} {
		counted.take()
		var got []string
		err := st.EachExecution(ctx, sess.ID, func(e *domain.Execution) bool {
			got = append(got, e.ID)
			return len(got) < tt.take
		})
		if err != nil {
			t.Fatal(err)
		}
		reads, items, _ := counted.take()
		if fmt.Sprint(got) != fmt.Sprint(ids[:tt.take]) {
			t.Errorf("take %d: got %v, want the first %d in creation order", tt.take, got, tt.take)
		}
		if reads != tt.reads || items != tt.items {
			t.Errorf("take %d: %d queries read %d items, want %d and %d", tt.take, reads, items, tt.reads, tt.items)
		}
	}
}
