package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/app/run"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/sessions"
)

// functionAgent pauses for the client's result of "lookup" when the message names it.
var functionAgent = map[string]any{"name": "c", "agent_type": "react_agent", "system_prompt": "Use tools.",
	"tools": []any{map[string]any{"type": "function", "name": "lookup", "description": "Look a word up",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}}}}}

// paused opens a session that waits for the client's lookup result and returns it with the
// paused execution and the answer.
func (r *workerRig) paused(t *testing.T) (sessionID, execID string, answer *sessions.Answer) {
	t.Helper()
	svc := r.app.Sessions()
	s, err := svc.Create(t.Context(), r.p, sessions.CreateInput{Config: domain.ConfigDocOf(functionAgent)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Execute(t.Context(), r.p, s.ID, sessions.ExecuteRequest{Content: sessions.TextContent(`lookup {"word":"otter"}`)}, sessions.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending == nil {
		t.Fatalf("the run did not pause: %+v", res.Execution)
	}
	return s.ID, res.Execution.ID, &sessions.Answer{HasResults: true,
		ToolResults: []sessions.ToolResultInput{{ToolCallID: res.Pending.ToolCalls[0].ID, Output: "an otter is a mammal"}}}
}

// hold takes the session's lease as a request that holds it would (the losing answer of a race,
// a run in progress) and returns its release.
func (r *workerRig) hold(t *testing.T, sessionID string) func() {
	t.Helper()
	id, now := uuid.NewString(), time.Now()
	if _, err := r.app.Store.AcquireSession(t.Context(), r.p, sessionID, id, now.Add(time.Minute), now); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := r.app.Store.ReleaseSession(context.WithoutCancel(t.Context()), sessionID, id); err != nil {
			t.Error(err)
		}
	}
}

// waitExecution polls the execution every 200 ms until done accepts its status or within has
// passed, and returns what it read last.
func (r *workerRig) waitExecution(t *testing.T, sid, eid string, within time.Duration, done func(status string) bool) *domain.Execution {
	t.Helper()
	start := time.Now()
	for {
		got, _ := r.execution(t, sid, eid)
		if done(got.Status) || time.Since(start) >= within {
			return got
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// redelivered long-polls the queue for up to within and returns the message and how long it
// took, or false.
func (r *workerRig) redelivered(t *testing.T, within time.Duration) (events.SQSEvent, time.Duration, bool) {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	for ctx.Err() == nil {
		out, err := r.env.SQS().ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{
			QueueUrl: aws.String(r.queue), MaxNumberOfMessages: 1, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		})
		if err != nil {
			break
		}
		if len(out.Messages) == 1 {
			ev := sqsEvent(out.Messages[0])
			ev.Records[0].EventSourceARN = r.arn
			return ev, time.Since(start), true
		}
	}
	return events.SQSEvent{}, time.Since(start), false
}

// TestWorkerRedrivesBusyAnswer is point 6 of issue 23 through fauxqs with the template's queue
// (visibility timeout 960 s): an accepted asynchronous answer meets the lease a losing request
// still holds; the worker gives the job back and it is delivered again within seconds, runs,
// and the poll shows the execution completed with the answer. Before, it came back after 960 s.
func TestWorkerRedrivesBusyAnswer(t *testing.T) {
	r := newWorkerRig(t)
	sid, eid, answer := r.paused(t)
	e, err := r.app.Sessions().Enqueue(t.Context(), r.p, sid, sessions.ExecuteRequest{Answer: answer})
	if err != nil {
		t.Fatal(err)
	}
	if e.ID != eid || e.Status != domain.ExecQueued {
		t.Fatalf("queued answer: %s %s, want %s queued", e.ID, e.Status, eid)
	}
	release := r.hold(t, sid)
	ev := r.receive(t)
	if failed := r.run(t, ev); len(failed) != 1 {
		t.Fatalf("failed records %v while the lease is held, want the job given back", failed)
	}
	if got, _ := r.execution(t, sid, eid); got.Status != domain.ExecQueued {
		t.Fatalf("execution %s after the busy attempt, want queued", got.Status)
	}
	release()

	again, took, ok := r.redelivered(t, 10*time.Second)
	if !ok {
		t.Fatalf("the job was not delivered again within %v (it waits the queue's visibility timeout)", took)
	}
	t.Logf("busy job delivered again after %v (queue visibility timeout 960 s)", took.Round(100*time.Millisecond))
	if n := again.Records[0].Attributes["ApproximateReceiveCount"]; n != "2" {
		t.Errorf("receive count %s, want 2", n)
	}
	if failed := r.run(t, again); len(failed) != 0 {
		t.Fatalf("failed records %v on the redelivery", failed)
	}
	got, msgs := r.execution(t, sid, eid)
	if got.Status != domain.ExecCompleted || got.Error != "" {
		t.Fatalf("execution %s %q, want completed", got.Status, got.Error)
	}
	if last := msgs[len(msgs)-1]; !strings.Contains(last.Content, "an otter is a mammal") {
		t.Errorf("reply %q does not use the answer", last.Content)
	}
}

// TestWorkerBusyExecutionCompletes: the dev stack's path (fauxqs, the event source stand-in,
// the worker's Lambda handler): a queued message whose session is busy completes within
// seconds of the session being free, as the poll shows.
func TestWorkerBusyExecutionCompletes(t *testing.T) {
	r := newWorkerRig(t)
	r.env.RunEventSources(t, r.app.Processor)
	s, err := r.app.Sessions().Create(t.Context(), r.p, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "w", "system_prompt": "be brief"})})
	if err != nil {
		t.Fatal(err)
	}
	release := r.hold(t, s.ID)
	e, err := r.app.Sessions().Enqueue(t.Context(), r.p, s.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // the worker meets the held lease at least once
	if got, _ := r.execution(t, s.ID, e.ID); got.Status != domain.ExecQueued {
		t.Fatalf("execution %s while the session is busy, want queued", got.Status)
	}
	release()
	start := time.Now()
	r.waitExecution(t, s.ID, e.ID, 20*time.Second, func(st string) bool { return st != domain.ExecQueued && st != domain.ExecRunning })
	t.Logf("completed %v after the session was free", time.Since(start).Round(100*time.Millisecond))
	r.checkCompleted(t, s.ID, e.ID)
}

// TestWorkerDeadLetterMarksFailed: a job whose session stays busy for all of its queue's
// receives is moved to the dead-letter queue by fauxqs (the template's redrive policy, here
// with maxReceiveCount 2 so that the test does not wait twenty minutes), where the
// dead-letter function marks its execution failed: the poll shows failed with an
// overloaded_error, and the session takes the next message.
func TestWorkerDeadLetterMarksFailed(t *testing.T) {
	r := newWorkerRig(t)
	dlq := r.env.Resources.Queues["ExecutionDeadLetterQueue"]
	policy, _ := json.Marshal(map[string]any{"deadLetterTargetArn": queueARN(t, r.env, dlq), "maxReceiveCount": 2})
	out, err := r.env.SQS().CreateQueue(t.Context(), &awssqs.CreateQueueInput{QueueName: aws.String("exec-short-" + uuid.NewString()[:8]),
		Attributes: map[string]string{"VisibilityTimeout": "960", "RedrivePolicy": string(policy)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = r.env.SQS().DeleteQueue(context.Background(), &awssqs.DeleteQueueInput{QueueUrl: out.QueueUrl})
	})
	r.queue = aws.ToString(out.QueueUrl)
	r.arn = queueARN(t, r.env, r.queue)
	cfg := r.env.Config
	cfg.ExecQueueURL = r.queue
	r.app = app.NewWithAWS(r.env.AWS, cfg, slog.New(slog.DiscardHandler))
	r.handler = platform.SQSHandler(worker(t, r.app), slog.New(slog.DiscardHandler))
	r.env.RunEventSources(t, r.app.Processor) // the dead-letter function on the template's DLQ

	s, err := r.app.Sessions().Create(t.Context(), r.p, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "w", "system_prompt": "be brief"})})
	if err != nil {
		t.Fatal(err)
	}
	release := r.hold(t, s.ID)
	e, err := r.app.Sessions().Enqueue(t.Context(), r.p, s.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		ev, took, ok := r.redelivered(t, 10*time.Second)
		if !ok {
			t.Fatalf("receive %d: nothing within %v", i+1, took)
		}
		if failed := r.run(t, ev); len(failed) != 1 {
			t.Fatalf("receive %d: failed %v, want the busy job given back", i+1, failed)
		}
	}
	release()
	// The next receive finds the count spent: fauxqs moves the job to the dead-letter queue.
	if _, _, ok := r.redelivered(t, 8*time.Second); ok {
		t.Fatal("the job was delivered a third time; want it dead-lettered")
	}
	got := r.waitExecution(t, s.ID, e.ID, 15*time.Second, func(st string) bool { return st == domain.ExecFailed })
	if got.Status != domain.ExecFailed || got.ErrorType != "overloaded_error" || !strings.Contains(got.Error, "gave up") {
		t.Fatalf("execution %s %s %q, want failed with an overloaded_error", got.Status, got.ErrorType, got.Error)
	}
	if _, err := r.app.Sessions().Execute(t.Context(), r.p, s.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello again")}, sessions.Observer{}); err != nil {
		t.Fatalf("the session after the dead letter: %v", err)
	}
}

// TestWorkerBackoffOutwaitsALease: the worker's backoff over ExecutionQueue's receives
// (template.yaml) outlasts the longest lease a run holds (the worker's timeout and the 30 s
// margin the lease keeps past a deadline), so a job meets a busy session only when it has
// stayed busy longer than any one run; and its first retry comes within seconds.
func TestWorkerBackoffOutwaitsALease(t *testing.T) {
	tmpl := loadTemplate(t)
	var receives, timeout int
	for _, q := range tmpl.Queues() {
		if q.LogicalID == "ExecutionQueue" {
			receives = q.MaxReceiveCount
		}
	}
	for _, f := range tmpl.Functions() {
		if f.Dir == "worker" {
			timeout = f.Timeout
		}
	}
	if receives == 0 || timeout == 0 {
		t.Fatalf("template.yaml: ExecutionQueue maxReceiveCount %d, WorkerFunction timeout %d", receives, timeout)
	}
	var waited time.Duration
	for n := 1; n < receives; n++ { // the last receive's failure goes to the dead-letter queue
		waited += run.WorkerBackoff.Floor(n)
	}
	lease := time.Duration(timeout)*time.Second + 30*time.Second
	if waited < lease {
		t.Errorf("%d receives wait at least %v in all, less than the longest lease %v", receives, waited, lease)
	}
	if first := run.WorkerBackoff.Floor(1); first > 10*time.Second {
		t.Errorf("first retry after %v, want within seconds", first)
	}
	t.Logf("a busy job is retried for at least %v over %d receives", waited, receives)
}
