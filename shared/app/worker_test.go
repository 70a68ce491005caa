package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/app/run"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/sessions"
)

// workerRig is an application wired to the SQS dispatcher on a queue made from template.yaml,
// and the worker's Lambda handler on the same application.
type workerRig struct {
	env     *localstack.TestEnv
	app     *app.App
	queue   string
	arn     string // the queue's, which Lambda's records carry
	handler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
	p       domain.Principal
}

func newWorkerRig(t *testing.T) *workerRig {
	t.Helper()
	env := localstack.NewTestEnv(t)
	r := &workerRig{env: env, queue: env.Resources.Queues["ExecutionQueue"]}
	if r.queue == "" {
		r.queue = env.Resources.Queues["IngestQueue"] // before template.yaml had the execution queue
	}
	if r.queue == "" {
		t.Fatalf("template.yaml has no ExecutionQueue: %v", env.Resources.Queues)
	}
	r.arn = queueARN(t, env, r.queue)
	cfg := env.Config
	cfg.ExecQueueURL = r.queue
	log := slog.New(slog.DiscardHandler)
	r.app = app.NewWithAWS(env.AWS, cfg, log)
	r.handler = platform.SQSHandler(worker(t, r.app), log)
	k, _, err := r.app.Auth.CreateKey(t.Context(), auth.NewKey{Name: "worker", Owner: "o", Company: "company-worker"})
	if err != nil {
		t.Fatal(err)
	}
	r.p = k.Principal()
	return r
}

// enqueue creates a session with cfg and queues "hello" in it through the SQS dispatcher.
func (r *workerRig) enqueue(t *testing.T, cfg map[string]any) (sessionID, executionID string) {
	t.Helper()
	s, err := r.app.Sessions().Create(t.Context(), r.p, sessions.CreateInput{Config: domain.ConfigDocOf(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	e, err := r.app.Sessions().Enqueue(t.Context(), r.p, s.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hello")})
	if err != nil {
		t.Fatal(err)
	}
	return s.ID, e.ID
}

// receive long-polls the queue for one message and returns it as Lambda's event source mapping
// would deliver it.
func (r *workerRig) receive(t *testing.T) events.SQSEvent {
	t.Helper()
	ev, _, ok := r.redelivered(t, 10*time.Second)
	if !ok {
		t.Fatal("no message arrived on the execution queue within 10 s")
	}
	return ev
}

// queueARN is the ARN of the queue at url.
func queueARN(t *testing.T, env *localstack.TestEnv, url string) string {
	t.Helper()
	out, err := env.SQS().GetQueueAttributes(t.Context(), &awssqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
}

func sqsEvent(m sqstypes.Message) events.SQSEvent {
	return events.SQSEvent{Records: []events.SQSMessage{{
		MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
		Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: m.Attributes, EventSource: "aws:sqs", AWSRegion: localstack.Region,
	}}}
}

// run feeds ev to the worker's handler with a Lambda-like deadline and returns the failed ids.
func (r *workerRig) run(t *testing.T, ev events.SQSEvent) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp, err := r.handler(ctx, ev)
	if err != nil {
		t.Fatalf("handler returned an error (Lambda would retry the whole batch): %v", err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return failed
}

// execution reads the execution as its owner would poll it.
func (r *workerRig) execution(t *testing.T, sessionID, executionID string) (*domain.Execution, []domain.Message) {
	t.Helper()
	_, e, msgs, err := r.app.Sessions().GetExecution(t.Context(), r.p, sessionID, executionID)
	if err != nil {
		t.Fatal(err)
	}
	return e, msgs
}

// checkCompleted checks that the execution completed with the local model's echo of "hello".
func (r *workerRig) checkCompleted(t *testing.T, sessionID, executionID string) *domain.Execution {
	t.Helper()
	e, msgs := r.execution(t, sessionID, executionID)
	if e.Status != domain.ExecCompleted || e.Error != "" || e.CompletedAt == nil {
		t.Fatalf("execution %s: status %q error %q completed_at %v; want completed", executionID, e.Status, e.Error, e.CompletedAt)
	}
	var reply string
	for _, m := range msgs {
		if m.Role == "assistant" {
			reply = m.Content
		}
	}
	if !strings.Contains(reply, "hello") || !strings.Contains(reply, "history=0") {
		t.Errorf("assistant reply %q; want the local model's echo of hello with history=0 (messages %+v)", reply, msgs)
	}
	return e
}

// An execution enqueued through the API's dispatcher travels over the queue to the worker's
// handler, which runs it; a redelivery of the same message changes nothing.
func TestWorkerRunsQueuedExecution(t *testing.T) {
	r := newWorkerRig(t)
	sid, eid := r.enqueue(t, map[string]any{"name": "w", "system_prompt": "be brief"})
	ev := r.receive(t)

	// Still queued: nothing ran it in-process, the queue is the only way to the worker.
	if e, _ := r.execution(t, sid, eid); e.Status != domain.ExecQueued {
		t.Fatalf("status %q before the worker ran, want queued", e.Status)
	}
	if failed := r.run(t, ev); len(failed) != 0 {
		t.Fatalf("failed records %v", failed)
	}
	first := r.checkCompleted(t, sid, eid)

	if failed := r.run(t, ev); len(failed) != 0 {
		t.Fatalf("redelivery: failed records %v", failed)
	}
	again := r.checkCompleted(t, sid, eid)
	if !again.CompletedAt.Equal(*first.CompletedAt) || len(again.MessageIDs) != len(first.MessageIDs) {
		t.Errorf("redelivery ran the execution again: completed %v → %v, messages %d → %d",
			first.CompletedAt, again.CompletedAt, len(first.MessageIDs), len(again.MessageIDs))
	}
}

// TestWorkerOutcomes checks which outcomes the worker hands back to SQS for redelivery (a batch
// item failure) and which it drops: client errors recorded on the execution are dropped, as a
// retry could only repeat them; bodies that are not jobs and internal failures are retried.
func TestWorkerOutcomes(t *testing.T) {
	r := newWorkerRig(t)
	tests := []struct {
		name string
		// event builds the event and returns a check of what the worker recorded, if any.
		event     func(t *testing.T) (events.SQSEvent, func(t *testing.T))
		app       func(t *testing.T) *app.App // nil: the rig's app
		wantRetry bool
		wantKind  domain.Kind // of the worker's error when wantRetry
	}{
		{
			name: "body is not a job",
			event: func(t *testing.T) (events.SQSEvent, func(*testing.T)) {
				return events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-bad", Body: `{"session_id":"x"}`}}}, nil
			},
			wantRetry: true, wantKind: domain.KindInternal, // so that it ends in the dead-letter queue
		},
		{
			name: "execution no longer exists",
			event: func(t *testing.T) (events.SQSEvent, func(*testing.T)) {
				body := `{"session_id":"` + uuid.NewString() + `","execution_id":"` + uuid.NewString() + `"}`
				return events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-gone", Body: body}}}, nil
			},
		},
		{
			name: "client error is recorded, not retried",
			event: func(t *testing.T) (events.SQSEvent, func(*testing.T)) {
				// No OpenAI base URL is configured, so the provider is unknown: invalid.
				sid, eid := r.enqueue(t, map[string]any{"name": "w", "system_prompt": "be brief", "llm_config": map[string]any{"provider": "openai"}})
				return r.receive(t), func(t *testing.T) {
					e, _ := r.execution(t, sid, eid)
					if e.Status != domain.ExecFailed || !strings.Contains(e.Error, "openai") {
						t.Errorf("execution status %q error %q; want failed naming the provider", e.Status, e.Error)
					}
				}
			},
		},
		{
			name: "store unavailable is retried",
			event: func(t *testing.T) (events.SQSEvent, func(*testing.T)) {
				body := `{"session_id":"` + uuid.NewString() + `","execution_id":"` + uuid.NewString() + `"}`
				return events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-down", Body: body}}}, nil
			},
			app: func(t *testing.T) *app.App {
				cfg := r.env.Config
				cfg.Table = "no-such-table-" + uuid.NewString()[:8]
				return app.NewWithAWS(r.env.AWS, cfg, slog.New(slog.DiscardHandler))
			},
			wantRetry: true, wantKind: domain.KindInternal,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, check := tt.event(t)
			a := r.app
			if tt.app != nil {
				a = tt.app(t)
			}
			resp, err := platform.SQSHandler(worker(t, a), slog.New(slog.DiscardHandler))(t.Context(), ev)
			if err != nil {
				t.Fatalf("handler returned an error: %v", err)
			}
			retried := len(resp.BatchItemFailures) == 1 && resp.BatchItemFailures[0].ItemIdentifier == ev.Records[0].MessageId
			if retried != tt.wantRetry || (!tt.wantRetry && len(resp.BatchItemFailures) != 0) {
				t.Errorf("batch item failures %+v; want the message retried: %v", resp.BatchItemFailures, tt.wantRetry)
			}
			err = worker(t, a)(t.Context(), ev.Records[0].Body)
			if tt.wantRetry {
				if err == nil || domain.KindOf(err) != tt.wantKind {
					t.Errorf("worker = %v, want an error of kind %v", err, tt.wantKind)
				}
			} else if err != nil && domain.KindOf(err).Retryable() {
				t.Errorf("worker = %v, want nil or an error that is not retried", err)
			}
			if check != nil {
				check(t)
			}
		})
	}
}

// TestWorkerEventReplay runs each events/worker-*.json through the worker's handler, its
// placeholders filled with an execution queued in DynamoDB Local, and expects it to complete.
func TestWorkerEventReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "events", "worker-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no events/worker-*.json")
	}
	r := newWorkerRig(t)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sid, eid := r.enqueue(t, map[string]any{"name": "w", "system_prompt": "be brief"})
			s := strings.NewReplacer(placeholderSession, sid, placeholderExecution, eid).Replace(string(raw))
			if left := placeholder.FindString(s); left != "" {
				t.Fatalf("placeholder %s left unfilled", left)
			}
			var ev events.SQSEvent
			if err := json.Unmarshal([]byte(s), &ev); err != nil {
				t.Fatal(err)
			}
			if len(ev.Records) != 1 {
				t.Fatalf("%d records; the worker's batch size is 1", len(ev.Records))
			}
			if failed := r.run(t, ev); len(failed) != 0 {
				t.Fatalf("failed records %v", failed)
			}
			r.checkCompleted(t, sid, eid)
		})
	}
}

// worker is the worker function's processor of a, as its main builds it.
func worker(t testing.TB, a *app.App) func(ctx context.Context, body string) error {
	t.Helper()
	p, err := run.Worker(a.App)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
