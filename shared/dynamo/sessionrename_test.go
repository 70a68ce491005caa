package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
)

// TestSessionRenameRoundTrips: a rename is one UpdateItem, whether it renames, is refused for
// another caller or finds no session (the failed condition's item tells the two apart), and a
// run's commit stays one transaction.
func TestSessionRenameRoundTrips(t *testing.T) {
	env := localstack.NewTestEnv(t)
	calls := newCounting(env.DynamoDB())
	st := dynamo.NewStore(calls, env.Config.Table)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := domain.Principal{Company: "acme", Owner: "alice"}
	now := time.Now().UTC()
	sess := &domain.Session{ID: uuid.NewString(), Name: "Desk", Owner: p.Owner, Company: p.Company, Config: map[string]any{"name": "Desk"},
		CreatedAt: now, UpdatedAt: now}
	if err := st.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	calls.reset()
	steps := []struct {
		name string
		run  func() error
		want map[string]int
	}{
		{"rename", func() error { _, err := st.RenameSession(ctx, p, sess.ID, "Refunds"); return err }, map[string]int{"UpdateItem": 1}},
		{"another owner", func() error {
			_, err := st.RenameSession(ctx, domain.Principal{Company: "acme", Owner: "bob"}, sess.ID, "Mine")
			return wantErr(err, domain.KindPermission)
		}, map[string]int{"UpdateItem": 1}},
		{"missing", func() error {
			_, err := st.RenameSession(ctx, p, uuid.NewString(), "Nobody's")
			return wantErr(err, domain.KindNotFound)
		}, map[string]int{"UpdateItem": 1}},
		{"clear", func() error { _, err := st.RenameSession(ctx, p, sess.ID, ""); return err }, map[string]int{"UpdateItem": 1}},
		{"a run's commit", func() error {
			lease := uuid.NewString()
			held, err := st.AcquireSession(ctx, p, sess.ID, lease, now.Add(time.Minute), now)
			if err != nil {
				return err
			}
			next := *held
			next.Executions++
			return st.Commit(ctx, domain.Commit{Session: &next, LeaseID: lease})
		}, map[string]int{"UpdateItem": 1, "TransactWriteItems": 1}},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if d := cmp.Diff(s.want, calls.reset()); d != "" {
			t.Errorf("%s: calls (-want +got):\n%s", s.name, d)
		}
	}
}

// wantErr is nil when err is of kind k, else an error saying what it was.
func wantErr(err error, k domain.Kind) error {
	if domain.KindOf(err) == k {
		return nil
	}
	return fmt.Errorf("%w (kind %v), want kind %v", err, domain.KindOf(err), k)
}
