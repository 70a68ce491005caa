package library_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
)

// TestCollectionUpdate: a change merges the fields given (the name trimmed, null description
// clears it), keeps the files, writes once and moves updated_at; one that changes nothing writes
// nothing; bad values are 400s naming the field and change nothing; another company's
// collection is not found.
func TestCollectionUpdate(t *testing.T) {
	h := newTestService(t)
	c, err := h.Svc.CreateCollection(ctx, alice, input[library.CollectionInput](map[string]any{"name": "Support", "description": "answers"}))
	if err != nil {
		t.Fatal(err)
	}
	a := upload(t, h, alice, "a.txt", "alpha")
	if _, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(a.ID)})); err != nil {
		t.Fatal(err)
	}
	before, _ := h.Svc.GetCollection(ctx, alice, c.ID)
	h.Clock.Advance(time.Second)
	h.Store.Reset()
	got, err := h.Svc.UpdateCollection(ctx, alice, c.ID, input[library.CollectionUpdate](map[string]any{"name": "  Help desk "}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "Help desk" || got.Description != "answers" || len(got.Files) != 1 || got.Files[0].ID != a.ID ||
		!got.UpdatedAt.After(before.UpdatedAt) || !got.CreatedAt.Equal(before.CreatedAt) || got.ID != c.ID {
		t.Errorf("renamed = %+v (files %d), before %+v", got.Collection, len(got.Files), before.Collection)
	}
	if n := h.Store.Get("UpdateCollection"); n != 1 {
		t.Errorf("%d UpdateCollection calls, want 1", n)
	}
	read, _ := h.Svc.GetCollection(ctx, alice, c.ID)
	if read.Name != "Help desk" || read.Description != "answers" || len(read.Files) != 1 {
		t.Errorf("read back = %+v", read.Collection)
	}

	got, err = h.Svc.UpdateCollection(ctx, alice, c.ID, input[library.CollectionUpdate](map[string]any{"description": nil}))
	if err != nil || got.Description != "" || got.Name != "Help desk" {
		t.Errorf("description null = %+v, %v", got, err)
	}

	// The same values again (and an empty change) write nothing.
	h.Store.Reset()
	for _, body := range []map[string]any{{}, {"name": "Help desk", "description": ""}} {
		if got, err := h.Svc.UpdateCollection(ctx, alice, c.ID, input[library.CollectionUpdate](body)); err != nil || got.Name != "Help desk" {
			t.Errorf("%v = %+v, %v", body, got, err)
		}
	}
	if n := h.Store.Get("UpdateCollection"); n != 0 {
		t.Errorf("a change of nothing wrote %d times", n)
	}

	for _, tt := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"null name", map[string]any{"name": nil}, "name"},
		{"empty name", map[string]any{"name": ""}, "name"},
		{"name of spaces", map[string]any{"name": " \u200b "}, "name"},
		{"name too long", map[string]any{"name": strings.Repeat("n", domain.MaxNameLength+1)}, "name"},
		{"description too long", map[string]any{"description": strings.Repeat("d", library.MaxDescriptionLength+1)}, "description"},
		{"both wrong", map[string]any{"name": "", "description": strings.Repeat("d", library.MaxDescriptionLength+1)}, "name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Svc.UpdateCollection(ctx, alice, c.ID, input[library.CollectionUpdate](tt.body))
			wantErr(t, err, domain.KindInvalid, tt.field)
		})
	}
	if read, _ := h.Svc.GetCollection(ctx, alice, c.ID); read.Name != "Help desk" {
		t.Errorf("after refused changes: %q", read.Name)
	}
	_, err = h.Svc.UpdateCollection(ctx, eve, c.ID, input[library.CollectionUpdate](map[string]any{"name": "mine"}))
	wantErr(t, err, domain.KindNotFound, "")
	_, err = h.Svc.UpdateCollection(ctx, alice, unknownID, input[library.CollectionUpdate](map[string]any{"name": "x"}))
	wantErr(t, err, domain.KindNotFound, "")
	_, err = h.Svc.UpdateCollection(ctx, alice, "not-an-id", input[library.CollectionUpdate](map[string]any{"name": "x"}))
	wantErr(t, err, domain.KindNotFound, "")
}

// TestCollectionUpdateConcurrentAdd: a rename that loses the race to a file being added reads
// the collection again: both the new name and the file hold.
func TestCollectionUpdateConcurrentAdd(t *testing.T) {
	h, hs, _ := withHooks(t)
	c := collection(t, h, alice, "c")
	a := upload(t, h, alice, "a.txt", "alpha")
	hs.beforeUpdate = func(int, *domain.Collection) error {
		hs.beforeUpdate = nil
		_, err := h.Svc.AddFiles(ctx, bob, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(a.ID)}))
		return err
	}
	got, err := h.Svc.UpdateCollection(ctx, alice, c.ID, input[library.CollectionUpdate](map[string]any{"name": "renamed"}))
	if err != nil {
		t.Fatal(err)
	}
	read, _ := h.Svc.GetCollection(ctx, alice, c.ID)
	for _, x := range []*library.Collection{got, read} {
		if x.Name != "renamed" || len(x.Files) != 1 || x.Files[0].ID != a.ID {
			t.Errorf("collection = %+v with %d files, want renamed with a.txt", x.Collection, len(x.Files))
		}
	}
}
