package a2aserve_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// TestA2AEndUserMemory: metadata.user_id of a message (or of its params) names the end user a
// new context's session serves, so that an agent with memory keeps that user's memory across
// contexts (the offline model calls memory_append when the message names it and echoes its
// prompt); another user's context and one without a user see none of it; a user_id that cannot
// be one, or one other than a continued context's user, is invalid params naming it.
func TestA2AEndUserMemory(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", fmt.Sprintf("a2a-memory-%d", time.Now().UnixNano()))
	s.agent(key, `{"name":"Keeper","agent_type":"react_agent","system_prompt":"You remember.","llm_config":{"provider":"local","model":"dev"},`+
		`"memory":{"blocks":[{"label":"human","limit":200}]}}`)
	c := s.client(key, "keeper")
	suffix := fmt.Sprint(time.Now().UnixNano())
	ann, bob := "ann-"+suffix, "bob-"+suffix
	// msg is a message naming user in its own metadata, or in the params' when onParams.
	msg := func(user any, onParams bool, text string) *a2a.MessageSendParams {
		p := textMessage(text)
		if onParams {
			p.Metadata = map[string]any{"user_id": user}
		} else {
			p.Message.Metadata = map[string]any{"user_id": user}
		}
		return p
	}
	first := send(t, c, msg(ann, false, `memory_append {"label":"human","text":"Ann bakes rye."}`))
	if got := artifactText(first); !strings.Contains(got, "now holds 14 of its 200 characters") {
		t.Fatalf("the tool's result: %q", got)
	}
	if got := artifactText(send(t, c, msg(ann, true, "what do you know of me?"))); !strings.Contains(got, "Ann bakes rye.") {
		t.Errorf("a later context of the user (params' metadata) does not remember: %q", got)
	}
	var streamed strings.Builder
	for ev, err := range c.SendStreamingMessage(context.Background(), msg(ann, false, "and you?")) {
		if err != nil {
			t.Fatalf("message/stream: %v", err)
		}
		if u, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			for _, p := range u.Artifact.Parts {
				if tp, ok := p.(a2a.TextPart); ok {
					streamed.WriteString(tp.Text)
				}
			}
		}
	}
	if !strings.Contains(streamed.String(), "Ann bakes rye.") {
		t.Errorf("a streamed context of the user does not remember: %q", streamed.String())
	}
	if got := artifactText(send(t, c, msg(bob, false, "what do you know of me?"))); strings.Contains(got, "Ann bakes") {
		t.Errorf("another user's context sees: %q", got)
	}
	if got := artifactText(send(t, c, textMessage("what do you know of me?"))); strings.Contains(got, "Ann bakes") || strings.Contains(got, "# Memory") {
		t.Errorf("a context without a user has memory: %q", got)
	}
	// A continued context keeps its user: named again or not named, never another.
	goOn := func(p *a2a.MessageSendParams) *a2a.MessageSendParams {
		p.Message.ContextID = first.ContextID
		return p
	}
	if got := artifactText(send(t, c, goOn(msg(ann, false, "and now?")))); !strings.Contains(got, "Ann bakes rye.") {
		t.Errorf("the user's continued context does not remember: %q", got)
	}
	if got := artifactText(send(t, c, goOn(textMessage("and now?")))); !strings.Contains(got, "Ann bakes rye.") {
		t.Errorf("the continued context without a user does not remember: %q", got)
	}
	for name, p := range map[string]*a2a.MessageSendParams{
		"another user on a context": goOn(msg(bob, false, "what do you know of me?")),
		"a control character":       msg("a\nb", false, "hi"),
		"a number":                  msg(7, true, "hi"),
		"two users": func() *a2a.MessageSendParams {
			p := msg(ann, false, "hi")
			p.Metadata = map[string]any{"user_id": bob}
			return p
		}(),
	} {
		_, err := c.SendMessage(context.Background(), p)
		if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "metadata.user_id") {
			t.Errorf("%s: %v, want invalid params naming metadata.user_id", name, err)
		}
	}
}
