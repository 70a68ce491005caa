package mcpserve

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/engine"
	"github.com/agentorch/agentorch/shared/sessions"
)

// progress sends a run's events to the client as notifications/progress of the call's token:
// progress counts the events (the total is unknown), message tells what happened. The run only
// queues them (sessions.Observer asks that it not be blocked); one goroutine sends them, on the
// call's own context, so that they go out on the call's event stream.
type progress struct {
	token any
	mu    sync.Mutex // orders the count with the queue
	n     float64
	queue *api.Queue[*mcp.ProgressNotificationParams]
	end   chan struct{}
	done  chan struct{}
}

// startProgress starts sending progress of token through ss.
func startProgress(ctx context.Context, ss *mcp.ServerSession, token any) *progress {
	p := &progress{token: token, queue: api.NewQueue[*mcp.ProgressNotificationParams](), end: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.queue.Ready():
				p.send(ctx, ss)
			case <-p.end:
				p.send(ctx, ss)
				return
			}
		}
	}()
	return p
}

// send sends what is queued; a client that went away misses it, the run goes on.
func (p *progress) send(ctx context.Context, ss *mcp.ServerSession) {
	for _, n := range p.queue.Take() {
		_ = ss.NotifyProgress(ctx, n)
	}
}

func (p *progress) push(message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.queue.Push(&mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: message})
}

// stop sends what is left and returns when it is sent.
func (p *progress) stop() {
	close(p.end)
	<-p.done
}

// observer reports the run's start (its execution id, which a cancel names) and each event.
func (p *progress) observer() sessions.Observer {
	return sessions.Observer{
		OnStart: func(id string) { p.push("execution " + id + " started") },
		OnEvent: func(e engine.Event) {
			msg := e.Type
			if e.Node != "" {
				msg += " " + e.Node
			}
			if name, _ := e.Data["tool"].(string); name != "" && (e.Type == engine.EventToolCall || e.Type == engine.EventToolResult) {
				msg += ": " + name
			}
			p.push(msg)
		},
	}
}
