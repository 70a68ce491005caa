package backoff

import (
	"context"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	for attempt, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second} {
		for i := 0; i < 50; i++ {
			if d := Delay(100*time.Millisecond, time.Second, attempt); d < want/2 || d > want {
				t.Fatalf("attempt %d: delay %s outside [%s, %s]", attempt, d, want/2, want)
			}
		}
	}
}

func TestSleepRespectsDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if Sleep(ctx, time.Second) {
		t.Error("slept past the deadline")
	}
	if time.Since(start) > 10*time.Millisecond {
		t.Error("waited although the deadline was too close")
	}
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("a short sleep without deadline refused")
	}
}
