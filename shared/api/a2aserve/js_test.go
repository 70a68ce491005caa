package a2aserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentorch/agentorch/infra/a2anpm"
	"github.com/agentorch/agentorch/infra/localstack"
)

// TestA2AJSClient runs the official JavaScript client (@a2a-js/sdk, infra/a2anpm) against the
// endpoints: the card, message/send, message/stream, tasks/get, tasks/cancel, an
// input-required round trip and a push config's set, list and delete, each answer checked here.
func TestA2AJSClient(t *testing.T) {
	s := newStack(t)
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := a2anpm.EnsureDeps(context.Background(), root, os.Stderr); errors.Is(err, a2anpm.ErrNoNPM) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	key := s.key("alice", "acme")
	s.agent(key, helperAgent)
	s.agent(key, clientAgent)
	pushURL, pushed := receiver(t)
	raw, err := a2anpm.Run(context.Background(), root, a2anpm.Tour{Base: s.url, Key: key, Agent: "helper", ToolAgent: "client", PushURL: pushURL + "/js"})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Card                                  a2a.AgentCard
		Send, Get, Paused, Resumed, Cancelled a2a.Task
		Events                                []json.RawMessage
		CancelCompleted                       string
		PushSet                               a2a.TaskPushConfig
		PushList, PushListAfterDelete         []a2a.TaskPushConfig
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("tour output: %v\n%s", err, raw)
	}
	if out.Card.Name != "Helper" || out.Card.URL != s.url+"/api/v1/a2a/helper/" {
		t.Errorf("card = %+v", out.Card)
	}
	if out.Send.Status.State != a2a.TaskStateCompleted || !strings.Contains(artifactText(&out.Send), "What is the refund policy?") {
		t.Errorf("message/send = %s %q", out.Send.Status.State, artifactText(&out.Send))
	}
	// The stream: the task (working) in the same context, the reply's chunks, the final status.
	var streamed strings.Builder
	var final *a2a.TaskStatusUpdateEvent
	for i, rawEv := range out.Events {
		ev, err := a2a.UnmarshalEventJSON(rawEv)
		if err != nil {
			t.Fatalf("event %d: %v: %s", i, err, rawEv)
		}
		switch ev := ev.(type) {
		case *a2a.Task:
			if i != 0 || ev.ContextID != out.Send.ContextID || ev.Status.State != a2a.TaskStateWorking {
				t.Errorf("event %d = task %+v", i, ev)
			}
		case *a2a.TaskArtifactUpdateEvent:
			streamed.WriteString(ev.Artifact.Parts[0].(a2a.TextPart).Text)
		case *a2a.TaskStatusUpdateEvent:
			final = ev
		}
	}
	if final == nil || !final.Final || final.Status.State != a2a.TaskStateCompleted || !strings.Contains(streamed.String(), "history=2") {
		t.Errorf("stream: final %+v, text %q", final, streamed.String())
	}
	if out.Get.ID != out.Send.ID || out.Get.Status.State != a2a.TaskStateCompleted || artifactText(&out.Get) != artifactText(&out.Send) {
		t.Errorf("tasks/get = %+v", out.Get)
	}
	if !strings.HasPrefix(out.CancelCompleted, "TaskNotCancelable") {
		t.Errorf("tasks/cancel of a completed task: %s", out.CancelCompleted)
	}
	if out.Paused.Status.State != a2a.TaskStateInputRequired || out.Resumed.ID != out.Paused.ID || out.Resumed.Status.State != a2a.TaskStateCompleted ||
		!strings.Contains(artifactText(&out.Resumed), "an otter is a mammal") {
		t.Errorf("input-required round trip: %s then %s %q", out.Paused.Status.State, out.Resumed.Status.State, artifactText(&out.Resumed))
	}
	if out.Cancelled.Status.State != a2a.TaskStateCanceled {
		t.Errorf("tasks/cancel of a paused task = %s", out.Cancelled.Status.State)
	}
	// Push notifications: the config set on the finished task pushed it with the token; it was
	// listed, then deleted.
	if out.PushSet.TaskID != out.Send.ID || out.PushSet.Config.ID != "js" || len(out.PushList) != 1 || out.PushList[0].Config.URL != pushURL+"/js" ||
		len(out.PushListAfterDelete) != 0 {
		t.Errorf("push configs: set %+v, list %+v, after delete %+v", out.PushSet, out.PushList, out.PushListAfterDelete)
	}
	if p := awaitPush(t, pushed, "/js", a2a.TaskStateCompleted); p.task.ID != out.Send.ID || p.header.Get("X-A2A-Notification-Token") != "js-token" {
		t.Errorf("push = %s %v", p.task.ID, p.header)
	}
}
