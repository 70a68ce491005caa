package openaiserve_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// TestEndUserMemory: the request's user names the end user a new conversation's session serves,
// so that an agent with memory keeps that user's memory across conversations (the offline model
// calls memory_append when the message names it and echoes its prompt); another user's
// conversation sees none of it, nor goes on in the user's (previous_response_id), and a user
// that cannot be one is a 400 naming user.
func TestEndUserMemory(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	s.agent(key, `{"system_config":{"name":"Keeper","agent_type":"react_agent","system_prompt":"You remember.","llm_config":{"provider":"local","model":"dev"},`+
		`"memory":{"blocks":[{"label":"human","limit":200}]}}}`)
	ctx := context.Background()
	c := s.client(key)
	ann, bob := "ann-"+uuid.NewString()[:8], "bob-"+uuid.NewString()[:8]
	chat := func(user, content string) string {
		t.Helper()
		res, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "keeper", User: openai.String(user),
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(content)}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Choices[0].Message.Content
	}
	if got := chat(ann, `memory_append {"label":"human","text":"Ann bakes rye."}`); !strings.Contains(got, "now holds 14 of its 200 characters") {
		t.Fatalf("the tool's result: %q", got)
	}
	if got := chat(ann, "what do you know of me?"); !strings.Contains(got, "Ann bakes rye.") {
		t.Errorf("a later conversation of the user does not remember: %q", got)
	}
	res, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "keeper", User: openai.String(ann),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("and you?")}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.OutputText(), "Ann bakes rye.") {
		t.Errorf("a Responses conversation of the user does not remember: %q", res.OutputText())
	}
	// Going on from Ann's response as Bob is refused (400 on user), Ann's memory unread; as Ann
	// it goes on.
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "keeper", User: openai.String(bob), PreviousResponseID: openai.String(res.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("what do you know of me?")}})
	var refused *openai.Error
	if !errors.As(err, &refused) || refused.StatusCode != 400 || refused.Param != "user" {
		t.Errorf("another user going on from Ann's response: %v", err)
	}
	if next, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "keeper", User: openai.String(ann), PreviousResponseID: openai.String(res.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("and now?")}}); err != nil || !strings.Contains(next.OutputText(), "Ann bakes rye.") {
		t.Errorf("Ann going on from her response: %v", err)
	}
	if got := chat(bob, "what do you know of me?"); strings.Contains(got, "Ann bakes") {
		t.Errorf("another user's conversation sees: %q", got)
	}
	if got := chat("", "what do you know of me?"); strings.Contains(got, "Ann bakes") || strings.Contains(got, "# Memory") {
		t.Errorf("a conversation without a user has memory: %q", got)
	}
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "keeper", User: openai.String("a\nb"),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "user" {
		t.Errorf("a bad user: %v", err)
	}
}
