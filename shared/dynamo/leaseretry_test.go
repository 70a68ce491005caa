package dynamo_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/dynamo"
)

// loseAnswer sends every request on, but answers the first UpdateItem (once armed) with a 500
// after DynamoDB applied it: a write whose answer was lost, which the SDK's retryer sends again.
type loseAnswer struct {
	base  *http.Client
	armed atomic.Bool
	lost  atomic.Int32
}

func (c *loseAnswer) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.base.Do(req)
	if err != nil || !strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".UpdateItem") || !c.armed.CompareAndSwap(true, false) {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	c.lost.Add(1)
	body := `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"answer lost"}`
	return &http.Response{StatusCode: http.StatusInternalServerError, Status: "500 Internal Server Error", Proto: "HTTP/1.1",
		ProtoMajor: 1, ProtoMinor: 1, Request: req, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
		Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}}}, nil
}

// TestAcquireRetriedAfterLostAnswer: an acquire whose UpdateItem took the lease but whose answer
// was lost (the SDK tries it again, and the retry's condition meets the lease its first attempt
// took) gets the session, not a conflict: before, the execute that sent it waited LeaseWait for
// itself and answered 409 "Another execution is running", the session held for RunLease.
func TestAcquireRetriedAfterLostAnswer(t *testing.T) {
	env := localstack.NewTestEnv(t)
	hc := &loseAnswer{base: &http.Client{}}
	db := dynamodb.New(env.DynamoDB().Options(), func(o *dynamodb.Options) { o.HTTPClient = hc })
	st := dynamo.NewStore(db, env.Config.Table)
	ctx := context.Background()
	alice := domain.Principal{Owner: "alice", Company: "acme"}
	now := time.Now().UTC()
	sess := &domain.Session{ID: uuid.NewString(), Name: "s", Owner: "alice", Company: "acme", Config: map[string]any{"name": "s"},
		Variables: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	if err := st.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"", uuid.NewString()} { // a brief hold, a run
		lease := uuid.NewString()
		hc.armed.Store(true)
		before := hc.lost.Load()
		got, err := st.AcquireRun(ctx, alice, sess.ID, lease, run, now.Add(time.Minute), now)
		if hc.lost.Load() != before+1 {
			t.Fatalf("run %q: the answer was not lost; the test proves nothing", run)
		}
		if err != nil {
			t.Fatalf("run %q: acquire after a lost answer: %v, want the session", run, err)
		}
		if got.ID != sess.ID || got.Owner != "alice" {
			t.Errorf("run %q: acquire returned %+v", run, got)
		}
		// The lease is this one: another is refused, its release frees the session.
		if _, err := st.AcquireSession(ctx, alice, sess.ID, uuid.NewString(), now.Add(time.Minute), now); domain.KindOf(err) != domain.KindConflict {
			t.Errorf("run %q: another acquire = %v, want conflict", run, err)
		}
		if err := st.ReleaseSession(ctx, sess.ID, lease); err != nil {
			t.Fatal(err)
		}
	}
}
