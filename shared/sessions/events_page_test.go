package sessions_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// TestEventsReadsOnlyWhatThePageNeeds: a page of a session's events reads executions, in the
// order they were created, only until one matching event past the page; an execution id is one
// read; paging through gives every event once, in order.
func TestEventsReadsOnlyWhatThePageNeeds(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	svc := newService(st, nil, sessions.Limits{})
	sess, err := svc.Create(ctx, alice, sessions.CreateInput{Config: domain.ConfigDocOf(map[string]any{"name": "a", "system_prompt": "hi"})})
	if err != nil {
		t.Fatal(err)
	}
	const runs = 30
	var order []string // execution ids in the order they ran
	perRun := 0
	for i := range runs {
		corr := fmt.Sprintf("c%d", i%3)
		res, err := svc.Execute(ctx, alice, sess.ID, sessions.ExecuteRequest{Content: sessions.TextContent("hi"), CorrelationID: &corr}, sessions.Observer{})
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, res.Execution.ID)
		perRun = len(res.Execution.Events)
	}
	if perRun < 2 {
		t.Fatalf("%d events per run; the test needs at least 2", perRun)
	}
	events := func(corr, exec string, offset, limit int) (sessions.EventsPage, int) {
		t.Helper()
		st.handed = 0
		pg, err := svc.Events(ctx, alice, sess.ID, corr, exec, offset, limit)
		if err != nil {
			t.Fatal(err)
		}
		return pg, st.handed
	}

	// The first page: executions up to the one holding the event after the page.
	for _, tt := range []struct{ offset, limit int }{{0, 1}, {0, 5}, {7, 10}, {40, 3}} {
		pg, read := events("", "", tt.offset, tt.limit)
		want := (tt.offset+tt.limit)/perRun + 1 // executions holding events 0 … offset+limit
		if read != want || len(pg.Events) != tt.limit || !pg.More || pg.Total != want*perRun {
			t.Errorf("offset %d limit %d: read %d executions (want %d), %d events, more %t, total %d (want %d)",
				tt.offset, tt.limit, read, want, len(pg.Events), pg.More, pg.Total, want*perRun)
		}
	}

	// Paging through: every event once, executions in the order they ran.
	var got []string
	for offset := 0; ; {
		pg, _ := events("", "", offset, 7)
		for _, e := range pg.Events {
			got = append(got, e["execution_id"].(string)+"/"+fmt.Sprint(e["sequence"]))
		}
		offset += len(pg.Events)
		if !pg.More {
			if pg.Total != runs*perRun {
				t.Errorf("last page total %d, want %d", pg.Total, runs*perRun)
			}
			break
		}
	}
	var want []string
	for _, id := range order {
		for seq := range perRun {
			want = append(want, id+"/"+fmt.Sprint(seq))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events paged through (-want +got):\n%s", diff)
	}

	// A correlation id: only its executions, read as far as the page needs.
	pg, read := events("c1", "", 0, perRun)
	if len(pg.Events) != perRun || pg.Events[0]["execution_id"] != order[1] || !pg.More || read != 5 {
		t.Errorf("correlation c1: %d events of %v, more %t, read %d executions (want 5: c0 c1 c2 c0 c1)", len(pg.Events), pg.Events[0]["execution_id"], pg.More, read)
	}
	// An execution id: one read, no listing.
	pg, read = events("", order[17], 0, 50)
	if read != 0 || pg.Total != perRun || pg.More || pg.Events[0]["execution_id"] != order[17] {
		t.Errorf("execution id: read %d listed, total %d, more %t", read, pg.Total, pg.More)
	}
	for _, id := range []string{"not-an-id", "00000000-0000-4000-8000-000000000000"} {
		if pg, _ := events("", id, 0, 50); pg.Total != 0 || len(pg.Events) != 0 || pg.More {
			t.Errorf("execution id %q: %+v, want no events", id, pg)
		}
	}
	if _, err := svc.Events(ctx, domain.Principal{Owner: "bob", Company: "acme"}, sess.ID, "", "", 0, 10); domain.KindOf(err) != domain.KindPermission {
		t.Errorf("another owner's events: %v", err)
	}
}
