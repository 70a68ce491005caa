package memory_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/localmodel"
	"github.com/agentorch/agentorch/shared/memory"
)

func jobBody(t testing.TB, job domain.MemoryExtractJob) string {
	t.Helper()
	b, err := json.Marshal(job)
	must(t, err)
	return string(b)
}

// storedTexts are the texts of the records of sc, sorted.
func storedTexts(h *harness, sc domain.MemoryScope) []string {
	out := []string{}
	for _, r := range h.store.Records() {
		if r.Company == sc.Company && r.UserID == sc.UserID && r.AgentID == sc.AgentID {
			out = append(out, r.Text)
		}
	}
	slices.Sort(out)
	return out
}

// TestProcessJob: the model is asked once, with the heading, the instructions in place of the
// default guidance, and the turn; each fact of its answer (fenced JSON, trimmed, repeats and
// non-strings left out) is saved with the job's source, but for one the scope remembers in the
// same words; a redelivered job saves nothing more.
func TestProcessJob(t *testing.T) {
	h := newHarness(t, nil)
	ctx := ctxOf(t)
	sc := domain.MemoryScope{Company: "acme", UserID: "alice", AgentID: "inline:support"}
	_, err := h.svc.Save(ctx, sc, "Alice lives in Lyon.", domain.MemorySource{Type: domain.MemorySourceTool})
	must(t, err)
	h.model.answer = "Here you go:\n```json\n{\"memories\": [\"  alice lives in lyon \", \"Alice keeps bees.\", 42, \"\", " +
		"\"Alice keeps bees.\", \"Alice's meeting is at 4 pm.\"]}\n```"
	job := domain.MemoryExtractJob{Scope: sc, SessionID: "s-1", ExecutionID: "x-1", Provider: "default", Model: "m-1",
		Instructions: "Remember only hobbies.", User: "I keep bees, you know.", Reply: "Lovely!"}
	must(t, h.svc.ProcessJob(ctx, jobBody(t, job)))

	want := []string{"Alice keeps bees.", "Alice lives in Lyon.", "Alice's meeting is at 4 pm."}
	if d := cmp.Diff(want, storedTexts(h, sc)); d != "" {
		t.Errorf("records after extraction (-want +got):\n%s", d)
	}
	for _, r := range h.store.Records() {
		if r.Text != "Alice lives in Lyon." && r.Source != (domain.MemorySource{Type: domain.MemorySourceExtraction, ExecutionID: "x-1", SessionID: "s-1"}) {
			t.Errorf("%q: source %+v", r.Text, r.Source)
		}
	}
	if len(h.model.reqs) != 1 {
		t.Fatalf("model asked %d times", len(h.model.reqs))
	}
	req := h.model.reqs[0]
	if !strings.HasPrefix(req.System, domain.MemoryExtractHeading) || !strings.Contains(req.System, "Remember only hobbies.") ||
		strings.Contains(req.System, "durable facts") || !strings.Contains(req.System, `{"memories"`) || req.Model != "m-1" {
		t.Errorf("system prompt: %q (model %q)", req.System, req.Model)
	}
	if len(req.Turns) != 1 || req.Turns[0].Role != domain.RoleUser || !strings.Contains(req.Turns[0].Parts[0].Text, "<user_message>\nI keep bees, you know.\n</user_message>") ||
		!strings.Contains(req.Turns[0].Parts[0].Text, "Lovely!") {
		t.Errorf("turns: %+v", req.Turns)
	}

	// Delivered again (its first run failed after saving): nothing is saved twice.
	must(t, h.svc.ProcessJob(ctx, jobBody(t, job)))
	if d := cmp.Diff(want, storedTexts(h, sc)); d != "" {
		t.Errorf("records after the job ran again (-want +got):\n%s", d)
	}
	// Another agent's scope remembers nothing of this: the same facts are new there.
	other := job
	other.Scope.AgentID = ""
	must(t, h.svc.ProcessJob(ctx, jobBody(t, other)))
	if d := cmp.Diff([]string{"Alice keeps bees.", "Alice's meeting is at 4 pm.", "alice lives in lyon"}, storedTexts(h, other.Scope)); d != "" {
		t.Errorf("the shared scope after the same extraction (-want +got):\n%s", d)
	}
}

// TestProcessJobOutcomes: what a job that cannot succeed does (nothing, no error: the queue
// would only deliver it again) and what a passing failure does (an error, nothing saved).
func TestProcessJobOutcomes(t *testing.T) {
	sc := domain.MemoryScope{Company: "acme", UserID: "alice"}
	good := domain.MemoryExtractJob{Scope: sc, User: "I like tea.", Reply: "Noted."}
	cases := []struct {
		name    string
		body    func(t testing.TB) string
		answer  string
		err     error
		setup   func(h *harness)
		wantErr error
	}{
		{name: "not JSON", body: func(testing.TB) string { return "{" }},
		{name: "no user", body: func(t testing.TB) string {
			j := good
			j.Scope.UserID = ""
			return jobBody(t, j)
		}},
		{name: "unknown provider", body: func(t testing.TB) string {
			j := good
			j.Provider = "nope"
			return jobBody(t, j)
		}},
		{name: "an answer without JSON", answer: "I could not find anything."},
		{name: "an answer of the wrong shape", answer: `{"memories": "tea"}`},
		{name: "no facts", answer: `{"memories": []}`},
		{name: "a model refusing the request", err: domain.Errorf(domain.KindInvalid, "bad model id")},
		{name: "a throttled model", err: domain.ErrOverloaded, wantErr: domain.ErrOverloaded},
		{name: "the index down", answer: `{"memories": ["Alice likes tea."]}`, wantErr: domain.ErrOverloaded,
			setup: func(h *harness) { h.index.setFail(domain.ErrOverloaded) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.model.answer, h.model.err = c.answer, c.err
			if c.setup != nil {
				c.setup(h)
			}
			body := jobBody(t, good)
			if c.body != nil {
				body = c.body(t)
			}
			err := h.svc.ProcessJob(ctxOf(t), body)
			if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Errorf("error %v, want %v", err, c.wantErr)
			}
			if rs := h.store.Records(); len(rs) != 0 {
				t.Errorf("%d records saved", len(rs))
			}
		})
	}
}

// TestEnqueue: one message, the job as JSON with its texts cut to MaxExtractTextLength, in the
// user's group; a job without a user is refused.
func TestEnqueue(t *testing.T) {
	h := newHarness(t, nil)
	ctx := ctxOf(t)
	job := domain.MemoryExtractJob{Scope: domain.MemoryScope{Company: "acme", UserID: "alice", AgentID: "a"}, SessionID: "s", ExecutionID: "x",
		User: strings.Repeat("é", domain.MaxExtractTextLength+5), Reply: "ok"}
	must(t, h.svc.Enqueue(ctx, job))
	if len(h.queue.sent) != 1 || h.queue.sent[0].group != memory.UserKey("acme", "alice") {
		t.Fatalf("sent %+v", h.queue.sent)
	}
	var got domain.MemoryExtractJob
	must(t, json.Unmarshal([]byte(h.queue.sent[0].body), &got))
	want := job
	want.User = strings.Repeat("é", domain.MaxExtractTextLength)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("job (-want +got):\n%s", d)
	}
	if err := h.svc.Enqueue(ctx, domain.MemoryExtractJob{Scope: domain.MemoryScope{Company: "acme"}}); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("a job without a user: %v", err)
	}
	h.queue.fail = domain.ErrOverloaded
	if err := h.svc.Enqueue(ctx, job); !errors.Is(err, domain.ErrOverloaded) {
		t.Errorf("queue down: %v", err)
	}
}

// TestLocalExtraction runs the whole path offline as make dev does: the offline model answers
// the extraction, the local default embedder embeds the facts, the OpenSearch stand-in finds
// them. A second turn that repeats one fact in other case and changes another (the meeting
// moved) saves the change and not the repeat, although both score near 1 against what is
// stored; the next search for the meeting finds both times, the new one among them.
func TestLocalExtraction(t *testing.T) {
	h := newHarness(t, defaultEmbedder(t))
	ctx := ctxOf(t)
	h.svc = memory.New(memory.Deps{Store: h.store, Index: h.index, Embedders: oneEmbedder{defaultEmbedder(t)},
		Models: models{"default": localmodel.Model{}}, Now: h.clock.Now})
	sc := domain.MemoryScope{Company: "acme", UserID: "alice", AgentID: "inline:support"}
	turn := func(user string) {
		t.Helper()
		must(t, h.svc.ProcessJob(ctx, jobBody(t, domain.MemoryExtractJob{Scope: sc, SessionID: "s", ExecutionID: "x", User: user,
			Reply: "I see. My advice is to rest."})))
	}
	turn("Hello! I live in Lyon. Can you help me plan a week? My meeting is at 3 pm on Monday.")
	if d := cmp.Diff([]string{"I live in Lyon.", "My meeting is at 3 pm on Monday."}, storedTexts(h, sc)); d != "" {
		t.Fatalf("after the first turn (-want +got):\n%s", d)
	}
	turn("i live in lyon! My meeting is at 4 pm on Monday.")
	want := []string{"I live in Lyon.", "My meeting is at 3 pm on Monday.", "My meeting is at 4 pm on Monday."}
	if d := cmp.Diff(want, storedTexts(h, sc)); d != "" {
		t.Errorf("after the second turn (-want +got):\n%s", d)
	}
	hits, tokens, err := h.svc.Search(ctx, sc, "When is my meeting?", 2)
	must(t, err)
	got := texts(hits)
	slices.Sort(got)
	if d := cmp.Diff(want[1:], got); d != "" || tokens == 0 {
		t.Errorf("search for the meeting (%d tokens) (-want +got):\n%s", tokens, d)
	}
}
