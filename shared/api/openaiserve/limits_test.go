package openaiserve_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// TestBudget: a key whose monthly token budget is spent is refused before the run, with 429 in
// OpenAI's shape (the SDK's error), streamed or not, as the execute is.
func TestBudget(t *testing.T) {
	s := newStack(t)
	tokens := int64(1)
	_, key, err := s.app.Auth.CreateKey(context.Background(), auth.NewKey{Name: "test", Owner: "alice",
		Company: fmt.Sprintf("openai-budget-%d", time.Now().UnixNano()), Budget: domain.Budget{MonthlyTokens: &tokens}})
	if err != nil {
		t.Fatal(err)
	}
	s.agent(key, helperAgent)
	c := s.client(key)
	params := openai.ChatCompletionNewParams{Model: "helper", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
	if _, err := c.Chat.Completions.New(t.Context(), params); err != nil { // nothing spent yet
		t.Fatal(err)
	}
	_, err = c.Chat.Completions.New(t.Context(), params)
	wantAPIError(t, err, http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded")
	stream := c.Chat.Completions.NewStreaming(t.Context(), params)
	for stream.Next() {
		t.Errorf("a chunk over budget: %s", stream.Current().RawJSON())
	}
	wantAPIError(t, stream.Err(), http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded")
}

// TestForeignToolCall: the tool call ids name a session, but only its owner continues it, with
// its model: another company's key, or another agent named as model, answering them is refused
// and the run still waits for its owner.
func TestForeignToolCall(t *testing.T) {
	s := newStack(t)
	acme, globex := s.key("alice", "acme"), s.key("bob", "globex")
	s.agent(acme, toolsAgent)
	s.agent(globex, toolsAgent)
	params := openai.ChatCompletionNewParams{Model: "tooler", Tools: []openai.ChatCompletionToolUnionParam{lookupTool},
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(`lookup {"word":"otter"}`)}}
	ac := s.client(acme)
	res, err := ac.Chat.Completions.New(t.Context(), params)
	if err != nil || len(res.Choices[0].Message.ToolCalls) != 1 {
		t.Fatal(res, err)
	}
	msg := res.Choices[0].Message
	params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage("forged", msg.ToolCalls[0].ID))
	gc := s.client(globex)
	_, err = gc.Chat.Completions.New(t.Context(), params)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || (apiErr.StatusCode != http.StatusForbidden && apiErr.StatusCode != http.StatusNotFound) {
		t.Fatalf("globex answering acme's call: %v", err)
	}
	// Another model of the same company answering the call is refused too (the call names a
	// session of the tooler's), and the run still waits for its own answer.
	s.agent(acme, helperAgent)
	other := params
	other.Model = "helper"
	_, err = ac.Chat.Completions.New(t.Context(), other)
	wantAPIError(t, err, http.StatusBadRequest, "invalid_request_error", "")
	params.Messages[2] = openai.ToolMessage("a mammal", msg.ToolCalls[0].ID)
	if res, err = ac.Chat.Completions.New(t.Context(), params); err != nil || res.Choices[0].FinishReason != "stop" {
		t.Fatalf("acme's answer after globex's: %v %v", res, err)
	}
}
