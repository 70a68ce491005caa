package library_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
)

// TestCollectionCreate: a new collection is pending with zero counts; bad bodies are 400s
// naming the field and store nothing.
func TestCollectionCreate(t *testing.T) {
	h := newTestService(t)
	c, err := h.Svc.CreateCollection(ctx, alice, input[library.CollectionInput](map[string]any{"name": "  Support ", "description": "customer support"}))
	if err != nil {
		t.Fatal(err)
	}
	want := &library.Collection{Collection: &domain.Collection{ID: c.ID, Company: "acme", Owner: alice.Owner, Name: "Support",
		Description: "customer support", FileIDs: []string{}, CreatedAt: c.CreatedAt, UpdatedAt: c.CreatedAt}}
	if d := cmp.Diff(want, c); d != "" || !domain.IsID(c.ID) || c.CreatedAt.IsZero() || summary(c).Status != domain.CollectionPending {
		t.Errorf("collection (-want +got):\n%s", d)
	}
	for _, tt := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no name", map[string]any{"description": "x"}, "name"},
		{"null name", map[string]any{"name": nil}, "name"},
		{"name of spaces", map[string]any{"name": " \u200b "}, "name"},
		{"name too long", map[string]any{"name": strings.Repeat("n", domain.MaxNameLength+1)}, "name"},
		{"description too long", map[string]any{"name": "x", "description": strings.Repeat("d", library.MaxDescriptionLength+1)}, "description"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Svc.CreateCollection(ctx, alice, input[library.CollectionInput](tt.body))
			wantErr(t, err, domain.KindInvalid, tt.field)
		})
	}
	if _, err := h.Svc.CreateCollection(ctx, alice, input[library.CollectionInput](map[string]any{"name": strings.Repeat("é", domain.MaxNameLength)})); err != nil {
		t.Errorf("name of exactly the limit: %v", err)
	}
	if list, _, _ := h.Svc.ListCollections(ctx, alice, 0, 0); len(list) != 2 {
		t.Errorf("%d collections, want 2", len(list))
	}
}

// TestCollectionStatus: status, progress and counts follow the files on every read.
func TestCollectionStatus(t *testing.T) {
	h := newTestService(t)
	c := collection(t, h, alice, "c")
	check := func(step, status string, progress, count int, size int64) {
		t.Helper()
		d, err := h.Svc.GetCollection(ctx, alice, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := domain.CollectionSummary{Status: status, Progress: progress, Files: count, Size: size}
		if got := summary(d); got != want {
			t.Errorf("%s: %+v, want %+v", step, got, want)
		}
	}
	add := func(id string) {
		t.Helper()
		if res, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(id)})); err != nil || !allDone(res) {
			t.Fatalf("AddFiles = %+v, %v", res, err)
		}
	}
	check("empty", "pending", 0, 0, 0)
	a := upload(t, h, alice, "a.txt", "alpha")
	add(a.ID)
	check("one active file", "completed", 100, 1, 5)
	up, err := h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: "u.txt", Size: 3, CollectionID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	check("one uploading", "pending", 50, 2, 8)
	h.Blobs.ClientPut(t, up.UploadURL, []byte("abc"))
	if _, err := h.Svc.CompleteUpload(ctx, alice, up.FileID); err != nil {
		t.Fatal(err)
	}
	check("upload completed", "completed", 100, 2, 8)
	if _, err := h.Svc.BulkFiles(ctx, alice, input[library.FileBulkInput](map[string]any{"operation": "change_status", "file_ids": anyIDs(a.ID),
		"parameters": map[string]any{"status": "archived"}})); err != nil {
		t.Fatal(err)
	}
	check("one archived", "completed", 100, 2, 8)
	late, err := h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: "late.txt", Size: 7, CollectionID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	h.Clock.Advance(library.PresignTTL)
	if _, err := h.Svc.CompleteUpload(ctx, alice, late.FileID); err == nil {
		t.Fatal("complete after expiry succeeded")
	}
	check("one failed upload", "failed", 100, 3, 15)
	if err := h.Svc.DeleteFile(ctx, alice, late.FileID); err != nil {
		t.Fatal(err)
	}
	check("failed file deleted", "completed", 100, 2, 8)
	if list, _, _ := h.Svc.ListCollections(ctx, alice, 0, 0); summary(list[0]).Status != "completed" || summary(list[0]).Size != 8 {
		t.Errorf("list view = %+v", list[0])
	}
}

// TestCollectionGet: the detail lists the files as datasources in the order they were added.
func TestCollectionGet(t *testing.T) {
	h := newTestService(t)
	a := upload(t, h, alice, "a.txt", "alpha")
	b := upload(t, h, alice, "b.csv", "x,y\n1,2\n")
	c := collection(t, h, alice, "c")
	if _, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(b.ID, a.ID)})); err != nil {
		t.Fatal(err)
	}
	got, err := h.Svc.GetCollection(ctx, bob, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]*domain.File{b, a}, got.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if sum := summary(got); sum.Files != 2 || sum.Size != b.Size+5 || got.Name != "c" || a.FileType != "document" || b.FileType != "data" {
		t.Errorf("detail = %+v %+v", got.Collection, sum)
	}
	for _, id := range []string{unknownID, "c-1", c.ID} {
		_, err := h.Svc.GetCollection(ctx, eve, id)
		wantErr(t, err, domain.KindNotFound, "")
	}
}

// TestCollectionList: the company's collections newest first, paged, in at most two Store calls
// (the collections and the files).
func TestCollectionList(t *testing.T) {
	h := newTestService(t)
	var ids []string
	for i := range 4 {
		ids = append(ids, collection(t, h, alice, "c"+strconv.Itoa(i)).ID)
	}
	collection(t, h, eve, "theirs")
	var files []string
	for i := range 5 {
		files = append(files, upload(t, h, alice, "f"+strconv.Itoa(i)+".txt", "text").ID)
	}
	for _, id := range ids {
		if _, err := h.Svc.AddFiles(ctx, alice, id, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(files...)})); err != nil {
			t.Fatal(err)
		}
	}
	h.Store.Reset()
	list, more, err := h.Svc.ListCollections(ctx, bob, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range list {
		got = append(got, c.ID)
		if sum := summary(c); sum.Files != 5 || sum.Size != 20 || sum.Status != "completed" {
			t.Errorf("listed collection = %+v", c)
		}
	}
	if !cmp.Equal(got, []string{ids[3], ids[2], ids[1]}) || !more {
		t.Errorf("first page = %v (more %v), want %v", got, more, []string{ids[3], ids[2], ids[1]})
	}
	if h.Store.Get("ListCollections") != 1 || h.Store.Get("GetFiles") != 1 || h.Store.Total() != 2 {
		t.Errorf("Store calls: %d in all", h.Store.Total())
	}
	list, more, err = h.Svc.ListCollections(ctx, alice, 3, 3)
	if err != nil || len(list) != 1 || list[0].ID != ids[0] || more {
		t.Errorf("second page = %+v, more %v, %v", list, more, err)
	}
	if list, _, _ := h.Svc.ListCollections(ctx, eve, 0, 0); len(list) != 1 || list[0].Name != "theirs" {
		t.Errorf("globex sees %+v", list)
	}
}

// TestCollectionFiles: a collection's files in the order added, a page at a time.
func TestCollectionFiles(t *testing.T) {
	h := newTestService(t)
	c := collection(t, h, alice, "c")
	var ids []string
	for i := range 5 {
		ids = append(ids, upload(t, h, alice, "f"+strconv.Itoa(i)+".txt", "text").ID)
	}
	upload(t, h, alice, "outside.txt", "not in it")
	if _, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(ids[3], ids[0], ids[4], ids[1], ids[2])})); err != nil {
		t.Fatal(err)
	}
	order := []string{ids[3], ids[0], ids[4], ids[1], ids[2]}
	for _, tt := range []struct {
		offset, limit int
		want          []string
		more          bool
	}{{0, 2, order[:2], true}, {2, 2, order[2:4], true}, {4, 2, order[4:], false}, {0, 0, order, false}, {7, 2, nil, false}} {
		files, more, err := h.Svc.CollectionFiles(ctx, alice, c.ID, tt.offset, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range files {
			got = append(got, f.ID)
		}
		if !cmp.Equal(got, tt.want) || more != tt.more || files == nil {
			t.Errorf("offset %d limit %d: %v more %v, want %v more %v", tt.offset, tt.limit, got, more, tt.want, tt.more)
		}
	}
	_, _, err := h.Svc.CollectionFiles(ctx, eve, c.ID, 0, 0)
	wantErr(t, err, domain.KindNotFound, "")
}

// TestCollectionAddFiles: one result per id; unknown, foreign, malformed and repeated ids fail;
// a file already in the collection is added again without change; three Store calls.
func TestCollectionAddFiles(t *testing.T) {
	h := newTestService(t)
	c := collection(t, h, alice, "c")
	a := upload(t, h, alice, "a.txt", "alpha")
	b := upload(t, h, alice, "b.txt", "beta")
	foreign := upload(t, h, eve, "e.txt", "globex")
	if _, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(a.ID)})); err != nil {
		t.Fatal(err)
	}
	h.Store.Reset()
	got, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(a.ID, b.ID, foreign.ID, unknownID, "bad", b.ID)}))
	if err != nil {
		t.Fatal(err)
	}
	want := []library.BulkItem{
		{FileID: a.ID, Status: "success"}, {FileID: b.ID, Status: "success"},
		{FileID: foreign.ID, Status: "failed", Error: "file not found"}, {FileID: unknownID, Status: "failed", Error: "file not found"},
		{FileID: "bad", Status: "failed", Error: "not a file id"},
		{FileID: b.ID, Status: "failed", Error: "duplicate: the id occurs earlier in this request"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	if n := h.Store.Total(); n != 3 || h.Store.Get("UpdateCollection") != 1 {
		t.Errorf("%d Store calls, want 3 (GetCollection, GetFiles, UpdateCollection)", n)
	}
	files, _, _ := h.Svc.CollectionFiles(ctx, alice, c.ID, 0, 0)
	if len(files) != 2 || files[0].ID != a.ID || files[1].ID != b.ID {
		t.Errorf("collection files = %+v", files)
	}

	// Adding only what is in it already writes nothing.
	h.Store.Reset()
	if got, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(b.ID)})); err != nil || !cmp.Equal(got, []library.BulkItem{{FileID: b.ID, Status: "success"}}) {
		t.Errorf("re-add = %+v, %v", got, err)
	}
	if h.Store.Get("UpdateCollection") != 0 {
		t.Error("a re-add wrote the collection")
	}
	// Another company cannot reach the collection, nor put its files into its own.
	_, err = h.Svc.AddFiles(ctx, eve, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(foreign.ID)}))
	wantErr(t, err, domain.KindNotFound, "")
	theirs := collection(t, h, eve, "theirs")
	if got, err := h.Svc.AddFiles(ctx, eve, theirs.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(a.ID)})); err != nil || allDone(got) || got[0].Error != "file not found" {
		t.Errorf("foreign add = %+v, %v", got, err)
	}
	for _, body := range []map[string]any{{}, {"file_ids": nil}, {"file_ids": []any{}}} {
		_, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](body))
		wantErr(t, err, domain.KindInvalid, "file_ids")
	}
	_, err = h.Svc.AddFiles(ctx, alice, "nope", input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(a.ID)}))
	wantErr(t, err, domain.KindNotFound, "")
}

// TestCollectionCapacity: a collection holds at most MaxCollectionFiles; ids beyond fail, and
// an upload into a full collection is a 409 that stores nothing.
func TestCollectionCapacity(t *testing.T) {
	h := newTestService(t, func(_ *library.Deps, l *library.Limits) { l.MaxCollectionFiles = 3 })
	c := collection(t, h, alice, "c")
	var ids []string
	for i := range 5 {
		ids = append(ids, upload(t, h, alice, "f"+strconv.Itoa(i)+".txt", "text").ID)
	}
	got, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(ids...)}))
	if err != nil {
		t.Fatal(err)
	}
	if ok, failed := tally(got); ok != 3 || failed != 2 || got[3].Status != "failed" || !strings.Contains(got[4].Error, "at most 3 files") {
		t.Errorf("result = %+v", got)
	}
	_, err = h.Svc.Upload(ctx, alice, library.Upload{Name: "x.txt", Data: []byte("x"), CollectionID: c.ID})
	wantErr(t, err, domain.KindConflict, "", "3 files")
	_, err = h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: "x.txt", Size: 1, CollectionID: c.ID})
	wantErr(t, err, domain.KindConflict, "")
	if l, _, _ := h.Svc.ListFiles(ctx, alice, library.FileFilter{}); len(l) != 5 || len(h.Blobs.Keys()) != 5 {
		t.Errorf("%d files, %d objects after refused uploads, want 5", len(l), len(h.Blobs.Keys()))
	}
}

// TestCollectionConcurrentAdd: an add that loses the race to another writer reads the
// collection again and keeps both writers' files.
func TestCollectionConcurrentAdd(t *testing.T) {
	h, hs, _ := withHooks(t)
	c := collection(t, h, alice, "c")
	a := upload(t, h, alice, "a.txt", "alpha")
	b := upload(t, h, alice, "b.txt", "beta")
	hs.beforeUpdate = func(int, *domain.Collection) error {
		hs.beforeUpdate = nil
		_, err := h.Svc.AddFiles(ctx, bob, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(b.ID)}))
		return err
	}
	if got, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(a.ID)})); err != nil || !allDone(got) {
		t.Fatalf("add = %+v, %v", got, err)
	}
	files, _, _ := h.Svc.CollectionFiles(ctx, alice, c.ID, 0, 0)
	if len(files) != 2 || files[0].ID != b.ID || files[1].ID != a.ID {
		t.Errorf("collection files = %+v, want b then a", files)
	}
}

// TestCollectionBulk: add_files and remove_files, one result per id; bad requests are 400s
// naming the field.
func TestCollectionBulk(t *testing.T) {
	h := newTestService(t)
	c := collection(t, h, alice, "c")
	a := upload(t, h, alice, "a.txt", "alpha")
	b := upload(t, h, alice, "b.txt", "beta")
	foreign := upload(t, h, eve, "e.txt", "globex")
	got, err := h.Svc.BulkCollection(ctx, alice, c.ID, input[library.CollectionBulkInput](map[string]any{"operation": "add_files", "file_ids": anyIDs(a.ID, b.ID, foreign.ID)}))
	if err != nil {
		t.Fatal(err)
	}
	want := []library.BulkItem{
		{FileID: a.ID, Status: "success"}, {FileID: b.ID, Status: "success"}, {FileID: foreign.ID, Status: "failed", Error: "file not found"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("add_files (-want +got):\n%s", d)
	}
	h.Store.Reset()
	got, err = h.Svc.BulkCollection(ctx, alice, c.ID, input[library.CollectionBulkInput](map[string]any{"operation": "remove_files", "file_ids": anyIDs(a.ID, unknownID, a.ID, "x")}))
	if err != nil {
		t.Fatal(err)
	}
	want = []library.BulkItem{
		{FileID: a.ID, Status: "success"}, {FileID: unknownID, Status: "failed", Error: "file not in the collection"},
		{FileID: a.ID, Status: "failed", Error: "duplicate: the id occurs earlier in this request"}, {FileID: "x", Status: "failed", Error: "not a file id"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("remove_files (-want +got):\n%s", d)
	}
	if h.Store.Total() != 2 {
		t.Errorf("remove_files made %d Store calls, want 2", h.Store.Total())
	}
	files, _, _ := h.Svc.CollectionFiles(ctx, alice, c.ID, 0, 0)
	if len(files) != 1 || files[0].ID != b.ID {
		t.Errorf("collection files = %+v", files)
	}
	if _, err := h.Svc.GetFile(ctx, alice, a.ID); err != nil {
		t.Errorf("removed file is gone: %v", err)
	}
	for _, tt := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"operation": "purge", "file_ids": anyIDs(a.ID)}, "operation"},
		{map[string]any{"file_ids": anyIDs(a.ID)}, "operation"},
		{map[string]any{"operation": "add_files", "file_ids": []any{}}, "file_ids"},
		{map[string]any{"operation": "remove_files"}, "file_ids"},
	} {
		_, err := h.Svc.BulkCollection(ctx, alice, c.ID, input[library.CollectionBulkInput](tt.body))
		wantErr(t, err, domain.KindInvalid, tt.field)
	}
	_, err = h.Svc.BulkCollection(ctx, eve, c.ID, input[library.CollectionBulkInput](map[string]any{"operation": "remove_files", "file_ids": anyIDs(b.ID)}))
	wantErr(t, err, domain.KindNotFound, "")
	if files, _, _ := h.Svc.CollectionFiles(ctx, alice, c.ID, 0, 0); len(files) != 1 {
		t.Errorf("collection after refused requests holds %d files", len(files))
	}
}

// TestCollectionDelete: 204-worthy for the caller's collection, its files remain; another
// company's is 404 and stays.
func TestCollectionDelete(t *testing.T) {
	h := newTestService(t)
	c := collection(t, h, alice, "c")
	a := upload(t, h, alice, "a.txt", "alpha")
	if _, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(a.ID)})); err != nil {
		t.Fatal(err)
	}
	wantErr(t, h.Svc.DeleteCollection(ctx, eve, c.ID), domain.KindNotFound, "")
	wantErr(t, h.Svc.DeleteCollection(ctx, alice, "c"), domain.KindNotFound, "")
	if _, err := h.Svc.GetCollection(ctx, alice, c.ID); err != nil {
		t.Fatalf("collection after a foreign delete: %v", err)
	}
	if err := h.Svc.DeleteCollection(ctx, bob, c.ID); err != nil {
		t.Fatal(err)
	}
	_, err := h.Svc.GetCollection(ctx, alice, c.ID)
	wantErr(t, err, domain.KindNotFound, "")
	if _, err := h.Svc.GetFile(ctx, alice, a.ID); err != nil {
		t.Errorf("file after its collection's delete: %v", err)
	}
}
