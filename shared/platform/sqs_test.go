package platform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/platform"
)

// TestSQSHandler checks the partial batch response: exactly the records that fail, panic or
// cannot start before the deadline are reported, by message id, and the handler never errs.
func TestSQSHandler(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name       string
		bodies     []string // message i has id "m<i>"
		process    func(ctx context.Context, body string) error
		ctx        func() (context.Context, context.CancelFunc)
		wantCalled []string
		wantFailed []string
		wantJSON   string
	}{
		{
			name:       "all succeed",
			bodies:     []string{"a", "b"},
			process:    func(context.Context, string) error { return nil },
			wantCalled: []string{"a", "b"},
			wantJSON:   `{"batchItemFailures":null}`,
		},
		{
			name:   "one fails, the rest still run",
			bodies: []string{"a", "fail", "c"},
			process: func(_ context.Context, body string) error {
				if body == "fail" {
					return errBoom
				}
				return nil
			},
			wantCalled: []string{"a", "fail", "c"},
			wantFailed: []string{"m1"},
			wantJSON:   `{"batchItemFailures":[{"itemIdentifier":"m1"}]}`,
		},
		{
			name:   "a panic fails its record only",
			bodies: []string{"panic", "b"},
			process: func(_ context.Context, body string) error {
				if body == "panic" {
					panic("nil map")
				}
				return nil
			},
			wantCalled: []string{"panic", "b"},
			wantFailed: []string{"m0"},
		},
		{
			name:       "every record fails",
			bodies:     []string{"a", "b"},
			process:    func(context.Context, string) error { return errBoom },
			wantCalled: []string{"a", "b"},
			wantFailed: []string{"m0", "m1"},
		},
		{
			name:    "no time left: nothing starts, everything is retried",
			bodies:  []string{"a", "b"},
			process: func(context.Context, string) error { return nil },
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), -time.Second)
			},
			wantFailed: []string{"m0", "m1"},
		},
		{
			name:   "a record that runs out of time fails and the next does not start",
			bodies: []string{"slow", "b"},
			process: func(ctx context.Context, _ string) error {
				<-ctx.Done()
				return ctx.Err()
			},
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 200*time.Millisecond)
			},
			wantCalled: []string{"slow"},
			wantFailed: []string{"m0", "m1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev events.SQSEvent
			for i, b := range tt.bodies {
				ev.Records = append(ev.Records, events.SQSMessage{MessageId: "m" + string(rune('0'+i)), Body: b,
					Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
			}
			var called []string
			process := func(ctx context.Context, body string) error {
				called = append(called, body)
				return tt.process(ctx, body)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			var logs bytes.Buffer
			h := platform.SQSHandler(process, slog.New(slog.NewJSONHandler(&logs, nil)))

			resp, err := h(ctx, ev)
			if err != nil {
				t.Fatalf("handler returned an error (Lambda would retry the whole batch): %v", err)
			}
			if diff := cmp.Diff(tt.wantCalled, called); diff != "" {
				t.Errorf("bodies processed (-want +got):\n%s", diff)
			}
			var failed []string
			for _, f := range resp.BatchItemFailures {
				failed = append(failed, f.ItemIdentifier)
			}
			if diff := cmp.Diff(tt.wantFailed, failed); diff != "" {
				t.Errorf("failed message ids (-want +got):\n%s", diff)
			}
			if tt.wantJSON != "" {
				b, _ := json.Marshal(resp)
				if string(b) != tt.wantJSON {
					t.Errorf("response JSON = %s, want %s", b, tt.wantJSON)
				}
			}
			// Each failure is logged once, at error level, with its message id.
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			if logs.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tt.wantFailed) {
				t.Fatalf("%d log lines for %d failures:\n%s", len(lines), len(tt.wantFailed), logs.String())
			}
			for i, l := range lines {
				var rec struct {
					Level        string `json:"level"`
					MessageID    string `json:"message_id"`
					ReceiveCount string `json:"receive_count"`
				}
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatal(err)
				}
				if rec.Level != "ERROR" || rec.MessageID != tt.wantFailed[i] || rec.ReceiveCount != "1" {
					t.Errorf("log line %s: want level ERROR, message_id %s, receive_count 1", l, tt.wantFailed[i])
				}
			}
		})
	}
}

// The processor's deadline ends before Lambda's, so the handler can still answer: two seconds
// early, or a tenth of the time left when that is less.
func TestSQSHandlerDeadlineReserve(t *testing.T) {
	tests := []struct {
		name     string
		left     time.Duration
		min, max time.Duration // the reserve seen by process
	}{
		{"long invocation keeps two seconds", time.Minute, 2 * time.Second, 2 * time.Second},
		{"short invocation keeps a tenth", 5 * time.Second, 400 * time.Millisecond, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tt.left)
			defer cancel()
			outer, _ := ctx.Deadline()
			var reserve time.Duration
			h := platform.SQSHandler(func(ctx context.Context, _ string) error {
				dl, ok := ctx.Deadline()
				if !ok {
					t.Fatal("process got no deadline")
				}
				reserve = outer.Sub(dl)
				return nil
			}, slog.New(slog.DiscardHandler))
			if _, err := h(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m0", Body: "x"}}}); err != nil {
				t.Fatal(err)
			}
			if reserve < tt.min || reserve > tt.max {
				t.Errorf("process deadline %v before Lambda's, want between %v and %v", reserve, tt.min, tt.max)
			}
		})
	}
}
