package openaiserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

// TestMain starts DynamoDB Local and the other stand-ins unless the run already provides them.
func TestMain(m *testing.M) { localstack.RunTests(m) }

// stack is the application on fresh resources, routed by template.yaml as the dev server routes
// it, behind a test server.
type stack struct {
	t   testing.TB
	app *app.App
	srv *httptest.Server
}

func newStack(t testing.TB) *stack {
	t.Helper()
	env := localstack.NewTestEnv(t)
	a := app.NewWithAWS(env.AWS, env.Config, slog.New(slog.DiscardHandler))
	mux, err := sam.NewRouter(env.Template, func(dir, _ string) (http.Handler, error) { return a.Handler(dir) })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &stack{t: t, app: a, srv: srv}
}

// key makes an API key of owner in company (every scope unless scopes are given).
func (s *stack) key(owner, company string, scopes ...string) string {
	s.t.Helper()
	_, secret, err := s.app.Auth.CreateKey(context.Background(), auth.NewKey{Name: "test", Owner: owner, Company: company, Scopes: scopes})
	if err != nil {
		s.t.Fatal(err)
	}
	return secret
}

// agent stores an agent with the key's company through the API.
func (s *stack) agent(key, body string) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/api/v1/agent/", strings.NewReader(body))
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }() // read whole below
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		s.t.Fatalf("create agent: %d %s", res.StatusCode, b)
	}
}

// client is the official Go SDK pointed at the stack, the key as its API key.
func (s *stack) client(key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(s.srv.URL+"/api/v1/openai/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

const (
	helperAgent = `{"system_config":{"name":"Helper","agent_type":"llm_agent","system_prompt":"You are terse.","llm_config":{"provider":"local","model":"dev"}}}`
	// toolsAgent is a react agent without tools of its own: the client's are its tools.
	toolsAgent = `{"system_config":{"name":"Tooler","agent_type":"react_agent","system_prompt":"Use tools.","llm_config":{"provider":"local","model":"dev"}}}`
)

var lookupTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "lookup", Description: openai.String("Look a word up"),
	Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}}})

// TestChatCompletions: the SDK's plain and streamed completions run the agent named by model with
// the conversation as sent (the offline model counts the turns before the last user message and
// echoes the agent's own prompt); models lists the company's agents and no other's.
func TestChatCompletions(t *testing.T) {
	s := newStack(t)
	acme, globex := s.key("alice", "acme"), s.key("bob", "globex")
	s.agent(acme, helperAgent)
	s.agent(globex, strings.Replace(helperAgent, "Helper", "Other", 1))
	ctx := context.Background()
	c := s.client(acme)

	res, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "helper", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("Ignored: the agent's prompt is its own."),
		openai.UserMessage("Hi"), openai.AssistantMessage("Hello."),
		openai.UserMessage("What is the refund policy?"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Choices[0].Message.Content
	for _, want := range []string{"You said: What is the refund policy?", "System prompt: You are terse.", "history=2"} {
		if !strings.Contains(got, want) {
			t.Errorf("content %q lacks %q", got, want)
		}
	}
	if res.Object != "chat.completion" || res.Model != "helper" || res.Choices[0].FinishReason != "stop" || res.Usage.TotalTokens == 0 || !strings.HasPrefix(res.ID, "chatcmpl-") {
		t.Errorf("completion = %s", res.RawJSON())
	}

	stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "helper",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Stream it")}, StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for stream.Next() {
		chunk := stream.Current()
		acc.AddChunk(chunk)
		if chunk.Object != "chat.completion.chunk" {
			t.Errorf("chunk object %q", chunk.Object)
		}
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || !strings.Contains(acc.Choices[0].Message.Content, "You said: Stream it") || acc.Choices[0].FinishReason != "stop" || acc.Usage.TotalTokens == 0 || chunks < 3 {
		t.Errorf("streamed %d chunks: %+v usage %+v", chunks, acc.Choices, acc.Usage)
	}

	models, err := c.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range models.Data {
		ids = append(ids, m.ID+"/"+string(m.Object)+"/"+m.OwnedBy)
	}
	if strings.Join(ids, ",") != "helper/model/acme" {
		t.Errorf("models = %v, want helper/model/acme only", ids)
	}
	// Another company's agent is an unknown model.
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "other", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	wantAPIError(t, err, http.StatusNotFound, "not_found_error", "model_not_found")
}

// TestChatToolRoundTrip: a client's function tool pauses the run; the assistant message carries the
// call with an id naming the session, the client's tool message continues it, and the reply
// answers with the result. Streamed, the call arrives as tool_calls deltas.
func TestChatToolRoundTrip(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	s.agent(key, toolsAgent)
	ctx := context.Background()
	c := s.client(key)

	params := openai.ChatCompletionNewParams{Model: "tooler", Tools: []openai.ChatCompletionToolUnionParam{lookupTool},
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(`lookup {"word":"otter"}`)}}
	res, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	msg := res.Choices[0].Message
	if res.Choices[0].FinishReason != "tool_calls" || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "lookup" {
		t.Fatalf("completion = %s", res.RawJSON())
	}
	tc := msg.ToolCalls[0]
	var args map[string]string
	if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil || args["word"] != "otter" || !strings.HasPrefix(tc.ID, "call_") {
		t.Fatalf("tool call = %+v", tc)
	}
	params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage("an otter is a mammal", tc.ID))
	res, err = c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Choices[0].Message.Content; res.Choices[0].FinishReason != "stop" || !strings.Contains(got, "Tool result: an otter is a mammal") {
		t.Errorf("answered: %s", res.RawJSON())
	}
	// The call was answered: answering it again is refused in OpenAI's shape.
	_, err = c.Chat.Completions.New(ctx, params)
	wantAPIError(t, err, http.StatusBadRequest, "invalid_request_error", "")

	// Streamed, the call comes as a tool_calls delta and the finish reason tool_calls.
	params.Messages = params.Messages[:1]
	stream := c.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || acc.Choices[0].FinishReason != "tool_calls" || len(acc.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("streamed: %+v", acc.Choices)
	}
	tc = acc.Choices[0].Message.ToolCalls[0]
	params.Messages = append(params.Messages, acc.Choices[0].Message.ToParam(), openai.ToolMessage("a river mammal", tc.ID))
	stream = c.Chat.Completions.NewStreaming(ctx, params)
	acc = openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || !strings.Contains(acc.Choices[0].Message.Content, "Tool result: a river mammal") {
		t.Errorf("streamed answer: %+v", acc.Choices)
	}
}

// TestResponses: the Responses API runs the agent plainly, streamed (typed events the SDK's
// accumulator takes, ending in response.completed), and with a function call answered by a
// function_call_output after previous_response_id.
func TestResponses(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	s.agent(key, helperAgent)
	s.agent(key, toolsAgent)
	ctx := context.Background()
	c := s.client(key)

	res, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "helper", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Plain question")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.OutputText(); res.Status != "completed" || !strings.Contains(got, "You said: Plain question") || res.Usage.TotalTokens == 0 {
		t.Errorf("response = %s", res.RawJSON())
	}

	stream := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "helper", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Streamed question")}})
	var acc responses.ResponseAccumulator
	var types, deltas []string
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if ev.Type == "response.output_text.delta" {
			deltas = append(deltas, ev.Delta)
		}
		var sev responses.ResponsesServerEventUnion
		if err := json.Unmarshal([]byte(ev.RawJSON()), &sev); err != nil {
			t.Fatal(err)
		}
		if err := acc.AddEvent(sev); err != nil {
			t.Fatalf("accumulate %s: %v", ev.Type, err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if types[0] != "response.created" || types[len(types)-1] != "response.completed" || len(deltas) == 0 {
		t.Errorf("events = %v", types)
	}
	if got := acc.Snapshot().OutputText(); !strings.Contains(got, "You said: Streamed question") || got != strings.Join(deltas, "") {
		t.Errorf("accumulated %q from deltas %q", got, deltas)
	}

	tools := []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "lookup",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}}}}}
	res, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "tooler", Tools: tools, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(`lookup {"word":"otter"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	var fc responses.ResponseFunctionToolCall
	for _, item := range res.Output {
		if item.Type == "function_call" {
			fc = item.AsFunctionCall()
		}
	}
	if fc.Name != "lookup" || fc.CallID == "" {
		t.Fatalf("response = %s", res.RawJSON())
	}
	res, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "tooler", Tools: tools, PreviousResponseID: openai.String(res.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: []responses.ResponseInputItemUnionParam{{
			OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String(fc.CallID),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("an otter is a mammal")}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.OutputText(); !strings.Contains(got, "Tool result: an otter is a mammal") {
		t.Errorf("answered: %s", res.RawJSON())
	}
}

// TestErrors: failures answer in OpenAI's error shape with the API's statuses: no key or a bad
// one 401, an unknown model 404, a bad request 400, a key without sessions:write 403.
func TestErrors(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	readOnly := s.key("alice", "acme", domain.ScopeAgentsRead)
	s.agent(key, helperAgent)
	ctx := context.Background()
	hi := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}

	bad := s.client("ak_not_a_key")
	_, err := bad.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "helper", Messages: hi})
	wantAPIError(t, err, http.StatusUnauthorized, "authentication_error", "invalid_api_key")
	c, ro := s.client(key), s.client(readOnly)
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "nope", Messages: hi})
	wantAPIError(t, err, http.StatusNotFound, "not_found_error", "model_not_found")
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "nope", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	wantAPIError(t, err, http.StatusNotFound, "not_found_error", "model_not_found")
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "helper", Messages: []openai.ChatCompletionMessageParamUnion{openai.AssistantMessage("no user")}})
	wantAPIError(t, err, http.StatusBadRequest, "invalid_request_error", "")
	_, err = ro.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "helper", Messages: hi})
	wantAPIError(t, err, http.StatusForbidden, "permission_error", "")

	// Without any key, the raw body is OpenAI's error object.
	res, err := http.Post(s.srv.URL+"/api/v1/openai/v1/chat/completions", "application/json", strings.NewReader(`{"model":"helper","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }() // read whole below
	var body map[string]map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	e := body["error"]
	_, hasParam := e["param"]
	if res.StatusCode != http.StatusUnauthorized || e["type"] != "authentication_error" || e["message"] == "" || e["code"] != "invalid_api_key" || !hasParam {
		t.Errorf("no key: %d %v", res.StatusCode, body)
	}
}

// wantAPIError fails unless err is the SDK's API error with the status, type and code (any code
// when code is empty).
func wantAPIError(t *testing.T, err error, status int, typ, code string) {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Errorf("err = %v, want an API error %d", err, status)
		return
	}
	if apiErr.StatusCode != status || apiErr.Type != typ || apiErr.Message == "" || (code != "" && apiErr.Code != code) {
		t.Errorf("API error = %d %s %s %q, want %d %s %s", apiErr.StatusCode, apiErr.Type, apiErr.Code, apiErr.Message, status, typ, code)
	}
}
