package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
)

// TestAcquireSessionTellsOutcomesApart: one conditional UpdateItem takes the lease, and on
// failure the returned old item tells a missing session (404), another caller's (403) and one
// leased by another execution (409) apart; an expired lease is taken over.
func TestAcquireSessionTellsOutcomesApart(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	ctx := context.Background()
	alice := domain.Principal{Owner: "alice", Company: "acme"}
	sess, lease := newSession(t, st) // alice's, leased for a minute
	now := time.Now().UTC()

	_, err := st.AcquireSession(ctx, alice, uuid.NewString(), uuid.NewString(), now.Add(time.Minute), now)
	if !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("missing session: %v, want not found", err)
	}
	for _, p := range []domain.Principal{{Owner: "bob", Company: "acme"}, {Owner: "alice", Company: "globex"}} {
		_, err = st.AcquireSession(ctx, p, sess.ID, uuid.NewString(), now.Add(time.Minute), now)
		if !errors.Is(err, domain.ErrPermission) {
			t.Errorf("%+v: %v, want permission", p, err)
		}
	}
	_, err = st.AcquireSession(ctx, alice, sess.ID, uuid.NewString(), now.Add(time.Minute), now)
	if domain.KindOf(err) != domain.KindConflict {
		t.Errorf("leased session: %v, want conflict", err)
	}
	// Past the lease's end another execution takes it over; the first can then not commit.
	later := now.Add(2 * time.Minute)
	second := uuid.NewString()
	if _, err := st.AcquireSession(ctx, alice, sess.ID, second, later.Add(time.Minute), later); err != nil {
		t.Fatalf("take over an expired lease: %v", err)
	}
	msg := domain.Message{ID: uuid.NewString(), Seq: 1, Role: "user", Content: "late", Visible: true, CreatedAt: now}
	err = st.Commit(ctx, domain.Commit{Session: sess, LeaseID: lease, Messages: []domain.Message{msg}})
	if domain.KindOf(err) != domain.KindConflict {
		t.Fatalf("commit with a lost lease: %v, want conflict", err)
	}
	if _, _, err := st.FindMessage(ctx, msg.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("the refused commit wrote its message: %v", err)
	}
	// Release is conditional on the lease too: the lost one changes nothing (the new holder
	// keeps the session), the current one frees it.
	if err := st.ReleaseSession(ctx, sess.ID, lease); err != nil {
		t.Fatalf("release with a lost lease: %v", err)
	}
	if _, err := st.AcquireSession(ctx, alice, sess.ID, uuid.NewString(), later.Add(time.Minute), later); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("after a release with the lost lease, acquire = %v, want conflict (the new holder keeps it)", err)
	}
	if err := st.ReleaseSession(ctx, sess.ID, second); err != nil {
		t.Fatalf("release: %v", err)
	}
	if _, err := st.AcquireSession(ctx, alice, sess.ID, uuid.NewString(), later.Add(time.Minute), later); err != nil {
		t.Errorf("acquire after release: %v", err)
	}
}

// TestSessionListPagingAndDelete: an owner's sessions list newest first in pages, never another
// owner's; deleting a session removes its messages and executions with it.
func TestSessionListPagingAndDelete(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := dynamo.NewStore(env.DynamoDB(), env.Config.Table)
	ctx := context.Background()
	base := time.Now().UTC().Add(-time.Hour)
	var ids []string
	for i := range 5 {
		at := base.Add(time.Duration(i) * time.Second)
		s := &domain.Session{ID: uuid.NewString(), Name: fmt.Sprint(i), Owner: "alice", Company: "acme",
			Config: map[string]any{"name": "s"}, Variables: map[string]any{}, CreatedAt: at, UpdatedAt: at}
		if err := st.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		ids = append([]string{s.ID}, ids...) // newest first
	}
	other := &domain.Session{ID: uuid.NewString(), Owner: "bob", Company: "acme", Config: map[string]any{}, Variables: map[string]any{},
		CreatedAt: base, UpdatedAt: base}
	if err := st.CreateSession(ctx, other); err != nil {
		t.Fatal(err)
	}
	var got []string
	for offset := 0; ; offset += 2 {
		page, more, err := st.ListSessions(ctx, "acme", "alice", offset, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page {
			got = append(got, s.ID)
		}
		if !more {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Errorf("pages gave %v, want %v newest first", got, ids)
	}

	sess, lease := newSession(t, st)
	commit(t, st, sess, lease, "one", "two")
	if err := st.DeleteSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetSession(ctx, sess.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if msgs, _, err := st.Messages(ctx, sess.ID, 10, 0); err != nil || len(msgs) != 0 {
		t.Errorf("messages after delete: %d, %v", len(msgs), err)
	}
	execs := 0
	if err := st.EachExecution(ctx, sess.ID, func(*domain.Execution) bool { execs++; return true }); err != nil || execs != 0 {
		t.Errorf("executions after delete: %d, %v", execs, err)
	}
}
