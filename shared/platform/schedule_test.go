package platform_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentorch/agentorch/shared/platform"
)

// TestScheduleHandler: each event runs the task once, before the invocation's deadline less the
// reserve; the task's error and a panic are the invocation's error.
func TestScheduleHandler(t *testing.T) {
	var runs int
	var left time.Duration
	h := platform.ScheduleHandler(func(ctx context.Context) error {
		runs++
		dl, _ := ctx.Deadline()
		left = time.Until(dl)
		return nil
	}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h(ctx, events.EventBridgeEvent{DetailType: "Scheduled Event"}); err != nil {
		t.Fatal(err)
	}
	if runs != 1 || left > time.Minute-time.Second {
		t.Errorf("runs %d, %v left; want one run with the reserve kept back", runs, left)
	}
	boom := errors.New("boom")
	if err := platform.ScheduleHandler(func(context.Context) error { return boom }, slog.New(slog.DiscardHandler))(ctx, events.EventBridgeEvent{}); !errors.Is(err, boom) {
		t.Errorf("a failed task: %v, want its error", err)
	}
	if err := platform.ScheduleHandler(func(context.Context) error { panic("bad") }, slog.New(slog.DiscardHandler))(ctx, events.EventBridgeEvent{}); err == nil {
		t.Error("a panicking task returned no error")
	}
}
