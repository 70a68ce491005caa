package openaiserve_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// BenchmarkChatCompletion measures what a chat completion costs against the execute route it
// stands for, on the same stack over HTTP, the local model answering: an execute in an open
// session, a session opened on the agent and then its execute (what each OpenAI request does:
// it brings its conversation and opens a session), and chat completions through the Go SDK,
// plain, streamed, and carrying ten earlier messages.
func BenchmarkChatCompletion(b *testing.B) {
	s := newStack(b)
	key := s.key("alice", "acme")
	s.agent(key, helperAgent)
	do := func(method, path, body string) []byte {
		req, _ := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
		req.Header.Set("x-api-key", key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }() // read whole below
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusCreated {
			b.Fatalf("%s %s: %d %s", method, path, res.StatusCode, out)
		}
		return out
	}
	open := func() string {
		var sess struct {
			ID string `json:"session_id"`
		}
		if err := json.Unmarshal(do(http.MethodGet, "/api/v1/sessions/from-agent/?agent_key=helper", ""), &sess); err != nil || sess.ID == "" {
			b.Fatal("from-agent:", err)
		}
		return sess.ID
	}
	b.Run("execute", func(b *testing.B) {
		sid := open()
		for b.Loop() {
			do(http.MethodPost, "/api/v1/runtime/"+sid+"/execute/", `{"content":"hi"}`)
		}
	})
	b.Run("session+execute", func(b *testing.B) {
		for b.Loop() {
			do(http.MethodPost, "/api/v1/runtime/"+open()+"/execute/", `{"content":"hi"}`)
		}
	})
	c := s.client(key)
	hi := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}
	b.Run("chat", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Chat.Completions.New(b.Context(), openai.ChatCompletionNewParams{Model: "helper", Messages: hi}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("chat-stream", func(b *testing.B) {
		for b.Loop() {
			st := c.Chat.Completions.NewStreaming(b.Context(), openai.ChatCompletionNewParams{Model: "helper", Messages: hi})
			for st.Next() {
			}
			if err := st.Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("chat-history10", func(b *testing.B) {
		var msgs []openai.ChatCompletionMessageParamUnion
		for range 5 {
			msgs = append(msgs, openai.UserMessage("an earlier question of a few words"), openai.AssistantMessage("an earlier answer of a few words"))
		}
		msgs = append(msgs, hi...)
		for b.Loop() {
			if _, err := c.Chat.Completions.New(b.Context(), openai.ChatCompletionNewParams{Model: "helper", Messages: msgs}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
