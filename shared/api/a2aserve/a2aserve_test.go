package a2aserve_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

const (
	helperAgent = `{"name":"Helper","agent_type":"llm_agent","system_prompt":"You are terse.","llm_config":{"provider":"local","model":"dev"}}`
	// A react agent with a client-side function tool: the offline model asks for "lookup" when
	// the message names it with arguments.
	clientAgent = `{"name":"Client","agent_type":"react_agent","system_prompt":"Use tools.","llm_config":{"provider":"local","model":"dev"},
		"tools":[{"type":"function","name":"lookup","description":"Look a word up","parameters":{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}}]}`
)

// card fetches an agent's card with the key, as a2a-go's resolver does.
func (s *stack) card(key, agentKey string) (*a2a.AgentCard, error) {
	r := agentcard.NewResolver(&http.Client{Transport: keyTransport{"x-api-key", key}})
	return r.Resolve(context.Background(), s.url+"/api/v1/a2a/"+agentKey)
}

// client is a2a-go's client of an agent, from its card, sending the key as a bearer token.
func (s *stack) client(key, agentKey string) *a2aclient.Client {
	s.t.Helper()
	card, err := s.card(key, agentKey)
	if err != nil {
		s.t.Fatalf("card of %s: %v", agentKey, err)
	}
	c, err := a2aclient.NewFromCard(context.Background(), card,
		a2aclient.WithJSONRPCTransport(&http.Client{Transport: keyTransport{"Authorization", "Bearer " + key}}))
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

func textMessage(text string) *a2a.MessageSendParams {
	return &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: text})}
}

// send sends a message and answers the task it made.
func send(t *testing.T, c *a2aclient.Client, params *a2a.MessageSendParams) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(context.Background(), params)
	if err != nil {
		t.Fatalf("message/send: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("message/send answered %T, want a task", res)
	}
	return task
}

func artifactText(t *a2a.Task) string {
	var b strings.Builder
	for _, a := range t.Artifacts {
		for _, p := range a.Parts {
			if tp, ok := p.(a2a.TextPart); ok {
				b.WriteString(tp.Text)
			}
		}
	}
	return b.String()
}

func TestA2ACardAndSend(t *testing.T) {
	s := newStack(t)
	acme := s.key("alice", "acme")
	s.agent(acme, helperAgent)

	card, err := s.card(acme, "helper")
	if err != nil {
		t.Fatal(err)
	}
	if card.Name != "Helper" || card.URL != s.url+"/api/v1/a2a/helper/" || card.PreferredTransport != a2a.TransportProtocolJSONRPC ||
		!card.Capabilities.Streaming || !card.Capabilities.PushNotifications || len(card.Skills) != 1 || card.Skills[0].ID != "helper" {
		t.Errorf("card = %+v", card)
	}
	if _, ok := card.SecuritySchemes["apiKey"].(a2a.APIKeySecurityScheme); !ok || len(card.Security) == 0 {
		t.Errorf("card's security = %v %v", card.SecuritySchemes, card.Security)
	}

	c := s.client(acme, "helper")
	task := send(t, c, textMessage("What is the refund policy?"))
	if task.Status.State != a2a.TaskStateCompleted || !strings.Contains(artifactText(task), "What is the refund policy?") ||
		!strings.Contains(artifactText(task), "You are terse.") {
		t.Fatalf("task = %s %q", task.Status.State, artifactText(task))
	}
	sid, eid := task.Metadata["session_id"], task.Metadata["execution_id"]
	if task.ContextID != sid || string(task.ID) != fmt.Sprintf("%s.%s", sid, eid) {
		t.Errorf("task %s in context %s, metadata %v", task.ID, task.ContextID, task.Metadata)
	}

	// The context goes on in the same session.
	next := textMessage("And shipping?")
	next.Message.ContextID = task.ContextID
	again := send(t, c, next)
	if again.ContextID != task.ContextID || again.ID == task.ID || !strings.Contains(artifactText(again), "history=2") {
		t.Errorf("follow-up = %s %s %q", again.ContextID, again.ID, artifactText(again))
	}
	if status, body := s.do("GET", "/api/v1/runtime/"+task.ContextID+"/messages/", acme, nil); status != 200 || !strings.Contains(string(body), `"total":4`) {
		t.Errorf("session messages: %d %s", status, body)
	}

	// tasks/get answers the task as its execution stands.
	got, err := c.GetTask(context.Background(), &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || artifactText(got) != artifactText(task) {
		t.Fatalf("tasks/get = %+v, %v", got, err)
	}
	if _, err := c.GetTask(context.Background(), &a2a.TaskQueryParams{ID: a2a.TaskID(task.ContextID + ".00000000-0000-4000-8000-000000000000")}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("unknown task: %v", err)
	}
	// A finished task is not cancelable.
	if _, err := c.CancelTask(context.Background(), &a2a.TaskIDParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Errorf("cancel a completed task: %v", err)
	}
	// A failed run before it starts is a JSON-RPC error in the API's error type.
	bad := textMessage("hi")
	bad.Message.ContextID = "00000000-0000-4000-8000-000000000000"
	if _, err := c.SendMessage(context.Background(), bad); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "not_found_error") {
		t.Errorf("unknown context: %v", err)
	}

	// Another company's key sees neither the card nor the endpoint nor the tasks: 404.
	globex := s.key("bob", "globex")
	var notOK *agentcard.ErrStatusNotOK
	if _, err := s.card(globex, "helper"); !errors.As(err, &notOK) || notOK.StatusCode != http.StatusNotFound {
		t.Errorf("globex's card of acme's agent: %v", err)
	}
	if status, body := s.do("POST", "/api/v1/a2a/helper/", globex, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"`+string(task.ID)+`"}}`); status != http.StatusNotFound || !strings.Contains(string(body), "not_found_error") {
		t.Errorf("globex's tasks/get: %d %s", status, body)
	}
	// No key: 401 in the envelope.
	if status, body := s.do("POST", "/api/v1/a2a/helper/", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`); status != http.StatusUnauthorized || !strings.Contains(string(body), "authentication_error") {
		t.Errorf("no key: %d %s", status, body)
	}
}

func TestA2AStream(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	s.agent(key, helperAgent)
	c := s.client(key, "helper")

	var first *a2a.Task
	var chunks []string
	var final *a2a.TaskStatusUpdateEvent
	lastChunks := 0
	for ev, err := range c.SendStreamingMessage(context.Background(), textMessage("Tell me about returns")) {
		if err != nil {
			t.Fatalf("message/stream: %v", err)
		}
		if final != nil {
			t.Fatalf("event after the final one: %T", ev)
		}
		switch ev := ev.(type) {
		case *a2a.Task:
			if first != nil || len(chunks) > 0 {
				t.Fatalf("a second task event")
			}
			first = ev
		case *a2a.TaskArtifactUpdateEvent:
			if first == nil || ev.TaskID != first.ID || ev.Artifact.ID != "response" || ev.Append != (len(chunks) > 0) {
				t.Fatalf("chunk %d = %+v", len(chunks), ev)
			}
			chunks = append(chunks, ev.Artifact.Parts[0].(a2a.TextPart).Text)
			if ev.LastChunk {
				lastChunks++
			}
		case *a2a.TaskStatusUpdateEvent:
			if !ev.Final {
				t.Fatalf("status event not final: %+v", ev)
			}
			final = ev
		}
	}
	if first == nil || first.Status.State != a2a.TaskStateWorking || final == nil || final.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("stream: first %+v, final %+v", first, final)
	}
	// The offline model answers in one delta (TestStreamerChunks holds several back by one).
	if len(chunks) == 0 || lastChunks != 1 {
		t.Errorf("%d chunks, %d marked last", len(chunks), lastChunks)
	}
	// The chunks make up the reply tasks/get answers.
	got, err := c.GetTask(context.Background(), &a2a.TaskQueryParams{ID: first.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || strings.Join(chunks, "") != artifactText(got) {
		t.Errorf("streamed %q, tasks/get %q (%v)", strings.Join(chunks, ""), artifactText(got), err)
	}
}

// TestA2AInputRequired: a run paused on a client function tool is input-required; a message
// naming the task with the tool's result in a data part continues it; a paused task cancels.
func TestA2AInputRequired(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	s.agent(key, clientAgent)
	c := s.client(key, "client")

	task := send(t, c, textMessage(`lookup {"word":"otter"}`))
	if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil {
		t.Fatalf("task = %+v", task)
	}
	var callID string
	for _, p := range task.Status.Message.Parts {
		if d, ok := p.(a2a.DataPart); ok {
			ra := d.Data["required_action"].(map[string]any)
			call := ra["tool_calls"].([]any)[0].(map[string]any)
			if ra["type"] != "tool_calls" || call["name"] != "lookup" {
				t.Fatalf("required_action = %v", ra)
			}
			callID = call["id"].(string)
		}
	}
	if callID == "" {
		t.Fatalf("no required_action in %+v", task.Status.Message)
	}
	// A text answer does not continue it; the result in a data part does.
	answer := func(parts ...a2a.Part) *a2a.MessageSendParams {
		m := a2a.NewMessage(a2a.MessageRoleUser, parts...)
		m.TaskID, m.ContextID = task.ID, task.ContextID
		return &a2a.MessageSendParams{Message: m}
	}
	if _, err := c.SendMessage(context.Background(), answer(a2a.TextPart{Text: "an otter is a mammal"})); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("text answer: %v", err)
	}
	done := send(t, c, answer(a2a.DataPart{Data: map[string]any{
		"tool_results": []any{map[string]any{"tool_call_id": callID, "output": "an otter is a mammal"}}}}))
	if done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted || !strings.Contains(artifactText(done), "an otter is a mammal") {
		t.Fatalf("continued task = %s %s %q", done.ID, done.Status.State, artifactText(done))
	}
	if _, err := c.SendMessage(context.Background(), answer(a2a.DataPart{Data: map[string]any{"tool_results": []any{}}})); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("answer to a finished task: %v", err)
	}

	// tasks/cancel of a paused task cancels it, as the cancel route does.
	paused := send(t, c, textMessage(`lookup {"word":"seal"}`))
	cancelled, err := c.CancelTask(context.Background(), &a2a.TaskIDParams{ID: paused.ID})
	if err != nil || cancelled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel = %+v, %v", cancelled, err)
	}
	if got, err := c.GetTask(context.Background(), &a2a.TaskQueryParams{ID: paused.ID}); err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("tasks/get after cancel = %+v, %v", got, err)
	}
}

// TestA2AAsync: configuration.blocking false queues the run (submitted); the worker runs it and
// tasks/get follows it to completed.
func TestA2AAsync(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	s.agent(key, helperAgent)
	c := s.client(key, "helper")
	blocking := false
	params := textMessage("queued hello")
	params.Config = &a2a.MessageSendConfig{Blocking: &blocking}
	task := send(t, c, params)
	if task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("queued task = %s", task.Status.State)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := c.GetTask(context.Background(), &a2a.TaskQueryParams{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.State.Terminal() {
			if got.Status.State != a2a.TaskStateCompleted || !strings.Contains(artifactText(got), "queued hello") {
				t.Fatalf("task = %s %q", got.Status.State, artifactText(got))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task still %s", got.Status.State)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestA2AScopesAndBudget: sending needs sessions:write, the card agents:read; a spent monthly
// budget refuses the run as the execute is refused.
func TestA2AScopesAndBudget(t *testing.T) {
	s := newStack(t)
	company := fmt.Sprintf("a2a-budget-%d", time.Now().UnixNano())
	owner := s.key("alice", company)
	s.agent(owner, helperAgent)
	readOnly := s.key("alice", company, func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeAgentsRead} })
	c := s.client(readOnly, "helper")
	if _, err := c.SendMessage(context.Background(), textMessage("hi")); !errors.Is(err, a2a.ErrInvalidRequest) || !strings.Contains(err.Error(), "permission_error") {
		t.Errorf("send without sessions:write: %v", err)
	}
	runOnly := s.key("alice", company, func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeSessionsWrite} })
	if status, _ := s.do("GET", "/api/v1/a2a/helper/.well-known/agent-card.json", runOnly, nil); status != http.StatusForbidden {
		t.Errorf("card without agents:read: %d", status)
	}

	tokens := int64(1)
	limited := s.key("alice", company, func(k *auth.NewKey) { k.Budget = domain.Budget{MonthlyTokens: &tokens} })
	c = s.client(limited, "helper")
	send(t, c, textMessage("hi")) // nothing spent yet
	if _, err := c.SendMessage(context.Background(), textMessage("hi")); err == nil || !strings.Contains(err.Error(), "rate_limit_error: Monthly token budget") {
		t.Errorf("over budget: %v", err)
	}
}
