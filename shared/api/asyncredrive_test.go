package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/mcp"
)

// newStackEnv is newStack keeping its env (queues), and a second application on the same
// records whose asynchronous requests go to a queue no worker reads: what it queues waits
// until the test hands the job on.
func newStackEnv(t *testing.T) (s, parked *stack, env *localstack.TestEnv, park string) {
	t.Helper()
	env = testEnv(t)
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler))
	a.UseMCP(mcp.ForPolicy)
	router := func(a *app.App) http.Handler {
		mux, err := sam.NewRouter(env.Template, func(dir, _ string) (http.Handler, error) { return a.Handler(dir) })
		if err != nil {
			t.Fatal(err)
		}
		return mux
	}
	env.RunEventSources(t, a.Processor)
	out, err := env.SQS().CreateQueue(t.Context(), &awssqs.CreateQueueInput{QueueName: aws.String("parked-" + uuid.NewString()[:8])})
	if err != nil {
		t.Fatal(err)
	}
	park = aws.ToString(out.QueueUrl)
	t.Cleanup(func() {
		_, _ = env.SQS().DeleteQueue(context.Background(), &awssqs.DeleteQueueInput{QueueUrl: out.QueueUrl})
	})
	cfg := env.Config
	cfg.ExecQueueURL = park
	b := app.NewWithAWS(env.AWS, cfg, slog.New(slog.DiscardHandler))
	return &stack{t: t, app: a, mux: router(a)}, &stack{t: t, app: b, mux: router(b)}, env, park
}

// poll reads an execution through the API until its status is not one of waiting, for up to d.
func (s *stack) poll(key, location string, d time.Duration, waiting ...string) map[string]any {
	s.t.Helper()
	var got map[string]any
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		got = s.ok("GET", location, key, nil).json(s.t)
		if !strings.Contains(" "+strings.Join(waiting, " ")+" ", " "+got["status"].(string)+" ") {
			break
		}
	}
	return got
}

// An asynchronous execute whose session is busy when the worker takes it (the lease held, as by
// a run in progress or the losing side of a race) is delivered again within seconds once the
// session is free, and the poll shows it completed; before, the queue hid it for 960 s.
func TestAsyncBusySessionCompletesSoon(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	p := domain.Principal{Owner: "alice", Company: "acme"}
	lease, now := uuid.NewString(), time.Now()
	if _, err := s.app.Store.AcquireSession(t.Context(), p, sid, lease, now.Add(time.Minute), now); err != nil {
		t.Fatal(err)
	}
	res := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/?async=true", key: key, body: `{"content":"when you can"}`})
	if res.status != 202 {
		t.Fatalf("async: %d %s", res.status, res.body)
	}
	loc := res.header.Get("Location")
	time.Sleep(3 * time.Second) // the worker meets the lease
	if got := s.ok("GET", loc, key, nil).json(t); got["status"] != "queued" {
		t.Fatalf("while busy: %v, want queued", got["status"])
	}
	if err := s.app.Store.ReleaseSession(t.Context(), sid, lease); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := s.poll(key, loc, 20*time.Second, "queued", "running")
	took := time.Since(start)
	if got["status"] != "completed" || !strings.Contains(reply(t, got["result"].(map[string]any)), "when you can") {
		t.Fatalf("after %v: %v, want completed", took, got)
	}
	t.Logf("completed %v after the session was free", took.Round(100*time.Millisecond))
}

// A job the execution queue gave up on reaches the dead-letter queue, whose function marks the
// execution failed: the poll shows failed with an overloaded_error. For a queued answer, the
// session still waits for it (required_action) and a new answer completes the execution.
func TestAsyncDeadLetterShowsFailed(t *testing.T) {
	s, parked, env, park := newStackEnv(t)
	key := s.key("alice", "acme")
	dlq := env.Resources.Queues["ExecutionDeadLetterQueue"]
	// deadLetter moves the parked job to the dead-letter queue, as SQS does after the last receive.
	deadLetter := func() {
		t.Helper()
		out, err := env.SQS().ReceiveMessage(t.Context(), &awssqs.ReceiveMessageInput{QueueUrl: aws.String(park), WaitTimeSeconds: 2})
		if err != nil || len(out.Messages) != 1 {
			t.Fatalf("parked job: %v, %d messages", err, len(out.Messages))
		}
		if _, err := env.SQS().SendMessage(t.Context(), &awssqs.SendMessageInput{QueueUrl: aws.String(dlq), MessageBody: out.Messages[0].Body}); err != nil {
			t.Fatal(err)
		}
		if _, err := env.SQS().DeleteMessage(t.Context(), &awssqs.DeleteMessageInput{QueueUrl: aws.String(park), ReceiptHandle: out.Messages[0].ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("message", func(t *testing.T) {
		sid := s.session(key, flatSession)
		res := parked.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/?async=true", key: key, body: `{"content":"never run"}`})
		if res.status != 202 {
			t.Fatalf("async: %d %s", res.status, res.body)
		}
		deadLetter()
		got := s.poll(key, res.header.Get("Location"), 15*time.Second, "queued", "running")
		e, _ := got["error"].(map[string]any)
		if got["status"] != "failed" || e["type"] != "overloaded_error" || !strings.Contains(e["message"].(string), "Send the message again") {
			t.Fatalf("dead-lettered execution: %v", got)
		}
		if r := reply(t, s.execute(key, sid, `{"content":"next"}`)); !strings.Contains(r, "next") {
			t.Errorf("the session after the dead letter: %q", r)
		}
	})

	t.Run("answer", func(t *testing.T) {
		sid := s.session(key, functionAgent)
		out := s.execute(key, sid, `{"content":"lookup {\"word\":\"otter\"}"}`)
		_, calls := requiredAction(t, out)
		answer := `{"tool_results":[{"tool_call_id":"` + calls[0]["id"].(string) + `","output":"an otter is a mammal"}]}`
		res := parked.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/?async=true", key: key, body: answer})
		if res.status != 202 {
			t.Fatalf("async answer: %d %s", res.status, res.body)
		}
		loc := res.header.Get("Location")
		deadLetter()
		got := s.poll(key, loc, 15*time.Second, "queued", "running")
		if e, _ := got["error"].(map[string]any); got["status"] != "failed" || e["type"] != "overloaded_error" {
			t.Fatalf("dead-lettered answer: %v", got)
		}
		sess := s.ok("GET", "/api/v1/sessions/"+sid+"/", key, nil).json(t)
		if _, c := requiredAction(t, sess); c[0]["id"] != calls[0]["id"] {
			t.Fatalf("session required_action = %v, want still the lookup call", sess["required_action"])
		}
		again := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/?async=true", key: key, body: answer})
		if again.status != 202 {
			t.Fatalf("answer again: %d %s", again.status, again.body)
		}
		got = s.poll(key, loc, 15*time.Second, "queued", "running", "failed")
		if got["status"] != "completed" || got["error"] != nil || !strings.Contains(reply(t, got["result"].(map[string]any)), "an otter is a mammal") {
			t.Fatalf("answered again: %v", got)
		}
	})
}
