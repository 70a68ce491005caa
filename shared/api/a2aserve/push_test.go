package a2aserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// push is one notification a receiver got: the task it carried and its headers.
type push struct {
	task   a2a.Task
	header http.Header
	path   string
}

// receiver is an A2A client's push endpoint (loopback, which MCP_ALLOWED_HOSTS allows locally).
func receiver(t testing.TB) (string, <-chan push) {
	t.Helper()
	got := make(chan push, 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var p push
		if err := json.Unmarshal(b, &p.task); err != nil {
			t.Errorf("push body %s: %v", b, err)
		}
		p.header, p.path = r.Header.Clone(), r.URL.Path
		select {
		case got <- p:
		default: // a benchmark's pushes, which nobody reads
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, got
}

// awaitPush is the first push to path whose task is in state, within a minute (the worker runs
// the task, then the delivery function pushes it).
func awaitPush(t *testing.T, got <-chan push, path string, state a2a.TaskState) push {
	t.Helper()
	timeout := time.After(90 * time.Second)
	for {
		select {
		case p := <-got:
			if p.path == path && p.task.Status.State == state {
				return p
			}
		case <-timeout:
			t.Fatalf("no push of a %s task to %s", state, path)
		}
	}
}

// TestA2APushNotifications: a queued send with a push config has its task pushed to the URL when
// it completes, as tasks/get shows it, with the token and the bearer credentials; a paused one is
// pushed input-required; a config set on a task that has ended pushes it at once; the configs
// are listed, read and deleted without their secrets, and only on the caller's tasks.
func TestA2APushNotifications(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	s.agent(key, helperAgent)
	s.agent(key, clientAgent)
	c := s.client(key, "helper")
	url, got := receiver(t)
	ctx := context.Background()

	blocking := false
	params := textMessage("pushed hello")
	params.Config = &a2a.MessageSendConfig{Blocking: &blocking, PushConfig: &a2a.PushConfig{ID: "mine", URL: url + "/done", Token: "tok-1",
		Auth: &a2a.PushAuthInfo{Schemes: []string{"Bearer"}, Credentials: "cred-1"}}}
	task := send(t, c, params)
	if task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("queued task = %s", task.Status.State)
	}
	p := awaitPush(t, got, "/done", a2a.TaskStateCompleted)
	if p.task.ID != task.ID || p.task.ContextID != task.ContextID || !strings.Contains(artifactText(&p.task), "pushed hello") {
		t.Errorf("pushed task = %s %s %q", p.task.ID, p.task.ContextID, artifactText(&p.task))
	}
	if p.header.Get("X-A2A-Notification-Token") != "tok-1" || p.header.Get("Authorization") != "Bearer cred-1" ||
		p.header.Get("Content-Type") != "application/json" || p.header.Get("Webhook-Signature") != "" {
		t.Errorf("push headers = %v", p.header)
	}
	polled, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || polled.Status.State != p.task.Status.State || artifactText(polled) != artifactText(&p.task) {
		t.Errorf("tasks/get = %+v, %v; pushed %+v", polled, err, p.task)
	}

	// The configs: listed and read without the token or credentials, then deleted.
	list, err := c.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: task.ID})
	if err != nil || len(list) != 1 || list[0].Config.ID != "mine" || list[0].Config.URL != url+"/done" || list[0].Config.Token != "" ||
		list[0].Config.Auth == nil || list[0].Config.Auth.Credentials != "" || list[0].TaskID != task.ID {
		t.Errorf("list = %+v, %v", list, err)
	}
	one, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: "mine"})
	if err != nil || one.Config.URL != url+"/done" || one.Config.Token != "" {
		t.Errorf("get = %+v, %v", one, err)
	}
	if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigParams{TaskID: task.ID, ConfigID: "mine"}); err != nil {
		t.Errorf("delete: %v", err)
	}
	if list, err := c.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: task.ID}); err != nil || len(list) != 0 {
		t.Errorf("list after delete = %+v, %v", list, err)
	}

	// Set on a task that has ended: pushed at once, with the token alone.
	set, err := c.SetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: task.ID, Config: a2a.PushConfig{URL: url + "/late", Token: "tok-2"}})
	if err != nil || set.Config.ID != string(task.ID) || set.Config.Token != "tok-2" {
		t.Fatalf("set = %+v, %v", set, err)
	}
	if p := awaitPush(t, got, "/late", a2a.TaskStateCompleted); p.task.ID != task.ID || p.header.Get("X-A2A-Notification-Token") != "tok-2" ||
		p.header.Get("Authorization") != "" {
		t.Errorf("late push = %s %v", p.task.ID, p.header)
	}

	// A blocking send with a config answers the task and pushes it too.
	params = textMessage("blocking hello")
	params.Config = &a2a.MessageSendConfig{PushConfig: &a2a.PushConfig{URL: url + "/blocking", Token: "tok-4"}}
	done := send(t, c, params)
	if p := awaitPush(t, got, "/blocking", a2a.TaskStateCompleted); p.task.ID != done.ID || !strings.Contains(artifactText(&p.task), "blocking hello") {
		t.Errorf("blocking send's push = %s %q", p.task.ID, artifactText(&p.task))
	}

	// So does a streamed one.
	params = textMessage("streamed hello")
	params.Config = &a2a.MessageSendConfig{PushConfig: &a2a.PushConfig{URL: url + "/stream", Token: "tok-5"}}
	var streamed a2a.TaskID
	for ev, err := range c.SendStreamingMessage(ctx, params) {
		if err != nil {
			t.Fatal(err)
		}
		if tk, ok := ev.(*a2a.Task); ok {
			streamed = tk.ID
		}
	}
	if p := awaitPush(t, got, "/stream", a2a.TaskStateCompleted); p.task.ID != streamed || p.header.Get("X-A2A-Notification-Token") != "tok-5" {
		t.Errorf("streamed send's push = %s %v", p.task.ID, p.header)
	}

	// A run paused on a client tool is pushed input-required, with what it waits for.
	cc := s.client(key, "client")
	params = textMessage(`lookup {"word":"otter"}`)
	params.Config = &a2a.MessageSendConfig{Blocking: &blocking, PushConfig: &a2a.PushConfig{URL: url + "/paused", Token: "tok-3"}}
	paused := send(t, cc, params)
	p = awaitPush(t, got, "/paused", a2a.TaskStateInputRequired)
	if p.task.ID != paused.ID || p.task.Status.Message == nil || p.header.Get("X-A2A-Notification-Token") != "tok-3" {
		t.Fatalf("paused push = %+v %v", p.task, p.header)
	}
	if !strings.Contains(string(mustJSON(t, p.task.Status.Message)), "required_action") {
		t.Errorf("paused push's status message = %s", mustJSON(t, p.task.Status.Message))
	}

	// An unknown task of the caller's session is not found, and keeps no config.
	ghost := a2a.TaskID(task.ContextID + ".01a21c53-0000-7000-8000-000000000000")
	if _, err := c.SetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: ghost, Config: a2a.PushConfig{URL: url + "/x"}}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("set on an unknown task: %v", err)
	}
	if list, err := c.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: ghost}); err != nil || len(list) != 0 {
		t.Errorf("configs of an unknown task = %+v, %v", list, err)
	}

	// Refused: a URL that is not http(s), and another company's task (not found, as tasks/get).
	if _, err := c.SetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: task.ID, Config: a2a.PushConfig{URL: "ftp://example.com/x"}}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("ftp URL: %v", err)
	}
	other := s.key("bob", "globex")
	s.agent(other, strings.Replace(helperAgent, `"Helper"`, `"Other"`, 1))
	oc := s.client(other, "other")
	if _, err := oc.SetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: task.ID, Config: a2a.PushConfig{URL: url + "/x"}}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("another company's task: %v", err)
	}
	if _, err := oc.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("list of another company's task: %v", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
