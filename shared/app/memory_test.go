package app_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/app/mem"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/platform"
)

// TestMemoryExtractEventReplay runs each events/memoryextract-*.json through the extraction
// function's handler, as its main builds it, against the stack: the offline model picks the
// user's first-person sentences, and they are saved as the user's records, with the job's
// session and execution as their source. The same job delivered again (SQS delivers at least
// once) saves nothing more: each fact is found as one the scope remembers already.
func TestMemoryExtractEventReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "events", "memoryextract-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no events/memoryextract-*.json: %v", err)
	}
	env := localstack.NewTestEnv(t)
	log := slog.New(slog.DiscardHandler)
	a := app.NewWithAWS(env.AWS, env.Config, log)
	process, err := a.Processor("memoryextract")
	if err != nil {
		t.Fatal(err)
	}
	handle := platform.SQSHandler(process, log)
	svc, err := mem.Service(a.App)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sid, eid, user := uuid.NewString(), uuid.NewString(), "user-"+uuid.NewString()
			s := strings.NewReplacer(placeholderSession, sid, placeholderExecution, eid).Replace(string(raw))
			if left := placeholder.FindString(s); left != "" {
				t.Fatalf("placeholder %s left unfilled", left)
			}
			var ev events.SQSEvent
			if err := json.Unmarshal([]byte(s), &ev); err != nil {
				t.Fatal(err)
			}
			var job domain.MemoryExtractJob
			for i := range ev.Records {
				// A user of this test's own, so that the records found are this replay's.
				if err := json.Unmarshal([]byte(ev.Records[i].Body), &job); err != nil {
					t.Fatal(err)
				}
				job.Scope.UserID = user
				b, _ := json.Marshal(job)
				ev.Records[i].Body = string(b)
			}
			p := domain.Principal{Company: job.Scope.Company}
			list := func() []*domain.MemoryRecord {
				t.Helper()
				recs, _, err := svc.ListRecords(t.Context(), p, domain.MemoryFilter{UserID: user}, 0, 100)
				if err != nil {
					t.Fatal(err)
				}
				return recs
			}
			for round := 1; round <= 2; round++ {
				resp, err := handle(t.Context(), ev)
				if err != nil || len(resp.BatchItemFailures) != 0 {
					t.Fatalf("delivery %d: %v, failures %v", round, err, resp.BatchItemFailures)
				}
			}
			recs := list()
			if len(recs) == 0 {
				t.Fatalf("no record saved for the job's user from %q", job.User)
			}
			texts := map[string]bool{}
			for _, r := range recs {
				if texts[r.Text] {
					t.Errorf("%q saved twice (the job was delivered twice)", r.Text)
				}
				texts[r.Text] = true
				want := domain.MemorySource{Type: domain.MemorySourceExtraction, ExecutionID: eid, SessionID: sid}
				if r.Source != want || r.AgentID != job.Scope.AgentID || !strings.Contains(job.User, r.Text) {
					t.Errorf("record %+v: want source %+v, agent %q and a sentence of the user's message", r, want, job.Scope.AgentID)
				}
			}
		})
	}
}

// TestMemoryExtractThroughTheQueue: a job memory.Service.Enqueue sends (MEMORY_QUEUE_URL, as the
// runs send one after a turn) reaches the extraction function through MemoryQueue's event
// source, as template.yaml maps it (the dev server runs the same mappings), and its facts become
// the user's records.
func TestMemoryExtractThroughTheQueue(t *testing.T) {
	env := localstack.NewTestEnv(t)
	if env.Config.MemoryQueueURL == "" {
		t.Fatal("the test env names no MemoryQueue")
	}
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler))
	env.RunEventSources(t, a.Processor)
	svc, err := mem.Service(a.App)
	if err != nil {
		t.Fatal(err)
	}
	sc := domain.MemoryScope{Company: "company-" + uuid.NewString(), UserID: "user-1", AgentID: "agent-1"}
	job := domain.MemoryExtractJob{Scope: sc, SessionID: uuid.NewString(), ExecutionID: uuid.NewString(),
		User: "My favourite colour is teal. Which paint should I buy?", Reply: "A teal satin finish."}
	if err := svc.Enqueue(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	p := domain.Principal{Company: sc.Company}
	f := domain.MemoryFilter{UserID: sc.UserID, AgentID: sc.AgentID, AgentSet: true}
	deadline := time.Now().Add(30 * time.Second)
	for {
		recs, _, err := svc.ListRecords(t.Context(), p, f, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) > 0 {
			if got, want := recs[0].Text, "My favourite colour is teal."; len(recs) != 1 || got != want {
				t.Errorf("records %+v, want one: %q", recs, want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no record 30 s after the job was queued")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
