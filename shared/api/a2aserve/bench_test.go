package a2aserve_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
)

// BenchmarkA2ASend is what a message/send costs over the plain execute it makes, both with the
// local model on a session of the same agent, over HTTP to the same server, through a2a-go's
// client (go test -run X -bench A2ASend ./shared/api/a2aserve/); and what a push config adds to a
// queued send.
func BenchmarkA2ASend(b *testing.B) {
	s := newStack(b)
	key := s.key("alice", "acme")
	s.agent(key, helperAgent)
	c := s.client(key, "helper")
	session := func() string {
		res, err := c.SendMessage(context.Background(), textMessage("hi"))
		if err != nil {
			b.Fatal(err)
		}
		return res.(*a2a.Task).ContextID
	}
	b.Run("execute", func(b *testing.B) {
		hc := &http.Client{Transport: keyTransport{"x-api-key", key}}
		url := fmt.Sprintf("%s/api/v1/runtime/%s/execute/", s.url, session())
		for b.Loop() {
			res, err := hc.Post(url, "application/json", strings.NewReader(`{"content":"hi"}`))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Fatal(res.Status)
			}
		}
	})
	// Queued sends (configuration.blocking false), each in a new session, without and with a
	// push config: what storing the config adds to the send.
	queued := func(b *testing.B, push *a2a.PushConfig) {
		blocking := false
		for b.Loop() {
			p := textMessage("hi")
			p.Config = &a2a.MessageSendConfig{Blocking: &blocking, PushConfig: push}
			res, err := c.SendMessage(context.Background(), p)
			if err != nil {
				b.Fatal(err)
			}
			if st := res.(*a2a.Task).Status.State; st != a2a.TaskStateSubmitted {
				b.Fatal(st)
			}
		}
	}
	b.Run("a2a-queued", func(b *testing.B) { queued(b, nil) })
	b.Run("a2a-queued-push", func(b *testing.B) {
		url, _ := receiver(b)
		queued(b, &a2a.PushConfig{URL: url + "/bench", Token: "t"})
	})
	b.Run("a2a", func(b *testing.B) {
		sid := session()
		for b.Loop() {
			p := textMessage("hi")
			p.Message.ContextID = sid
			res, err := c.SendMessage(context.Background(), p)
			if err != nil {
				b.Fatal(err)
			}
			if st := res.(*a2a.Task).Status.State; st != a2a.TaskStateCompleted {
				b.Fatal(st)
			}
		}
	})
}
