package localstack

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/platform"
)

// Tasks builds the task of a scheduled function by its directory under functions/
// (app.App.Task).
type Tasks func(dir string) (func(ctx context.Context) error, error)

// RunSchedules runs, until ctx ends, a stand-in of EventBridge's schedules for every Schedule
// event in tmpl: it invokes the function's handler — the same platform.ScheduleHandler its
// Lambda main serves — with a scheduled event at each tick of the event's rate, within the
// function's timeout, one invocation at a time. every, when not zero, replaces the template's
// rates (the dev server's DEV_SCHEDULE_EVERY, to watch a sweep sooner).
func RunSchedules(ctx context.Context, tmpl *sam.Template, build Tasks, log *slog.Logger, every time.Duration) error {
	var wg sync.WaitGroup
	for _, f := range tmpl.Functions() {
		for _, expr := range f.Schedules {
			period, err := Rate(expr)
			if err != nil {
				return fmt.Errorf("template.yaml: %s: %w", f.LogicalID, err)
			}
			if every > 0 {
				period = every
			}
			task, err := build(f.Dir)
			if err != nil {
				return err
			}
			handler := platform.ScheduleHandler(task, log)
			timeout := time.Duration(max(f.Timeout, 3)) * time.Second
			wg.Go(func() {
				tick := time.NewTicker(period)
				defer tick.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case at := <-tick.C:
						ictx, cancel := context.WithTimeout(ctx, timeout)
						_ = handler(ictx, events.EventBridgeEvent{Version: "0", ID: uuid.NewString(), DetailType: "Scheduled Event",
							Source: "aws.events", Time: at.UTC(), Region: Region, Detail: []byte("{}")})
						cancel()
					}
				}
			})
		}
	}
	wg.Wait()
	return ctx.Err()
}

// Rate reads an EventBridge rate expression ("rate(1 minute)", "rate(5 minutes)", hours,
// days); cron expressions are not run locally.
func Rate(expr string) (time.Duration, error) {
	in, ok := strings.CutPrefix(expr, "rate(")
	if !ok || !strings.HasSuffix(in, ")") {
		return 0, fmt.Errorf("schedule %q: only rate(...) expressions run locally", expr)
	}
	n, unit, _ := strings.Cut(strings.TrimSuffix(in, ")"), " ")
	v, err := strconv.Atoi(n)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("schedule %q: the rate is not a positive integer", expr)
	}
	units := map[string]time.Duration{"minute": time.Minute, "minutes": time.Minute, "hour": time.Hour, "hours": time.Hour,
		"day": 24 * time.Hour, "days": 24 * time.Hour}
	d, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("schedule %q: unit %q is none of minute(s), hour(s), day(s)", expr, unit)
	}
	return time.Duration(v) * d, nil
}
