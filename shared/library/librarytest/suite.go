package librarytest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
)

// StoreSuite holds a library.Store to the port's contract: not-found and conflict kinds, the
// optimistic locks of UpdateFile and UpdateCollection, companies kept apart, pages (limit,
// cursor, order, last page, malformed cursor) and deletes. It runs against the fake
// (MemStore) and against the DynamoDB adapter on DynamoDB Local, so that the fake cannot drift
// from DynamoDB's conditions and paging. newStore may return one store to every subtest: each
// makes up its own companies and ids.
func StoreSuite(t *testing.T, newStore func(t *testing.T) library.Store) {
	t.Run("FileRoundTrip", func(t *testing.T) { fileRoundTrip(t, newStore(t)) })
	t.Run("UpdateFile", func(t *testing.T) { updateFile(t, newStore(t)) })
	t.Run("GetFiles", func(t *testing.T) { getFiles(t, newStore(t)) })
	t.Run("ListFilesPages", func(t *testing.T) { listFilesPages(t, newStore(t)) })
	t.Run("LastPage", func(t *testing.T) { lastPage(t, newStore(t)) })
	t.Run("Cursor", func(t *testing.T) { cursor(t, newStore(t)) })
	t.Run("Collections", func(t *testing.T) { collections(t, newStore(t)) })
	t.Run("ListCollectionsPages", func(t *testing.T) { listCollectionsPages(t, newStore(t)) })
	t.Run("TooLarge", func(t *testing.T) { tooLarge(t, newStore(t)) })
}

// Company is a company name no other test uses.
func Company(name string) string { return name + "-" + uuid.NewString()[:8] }

// Base is the time the suites' records are created around (a fixed instant, so that fractions
// that RFC 3339 trims, .1 and .12, are exercised).
var Base = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// WantKind fails the test unless err is of kind want (and, for not-found and conflict, Is the
// domain's sentinel of that kind).
func WantKind(t *testing.T, what string, err error, want domain.Kind) {
	t.Helper()
	if got := domain.KindOf(err); got != want {
		t.Errorf("%s: %v (kind %v), want kind %v", what, err, got, want)
		return
	}
	sentinel := map[domain.Kind]error{domain.KindNotFound: domain.ErrNotFound, domain.KindConflict: domain.ErrConflict}[want]
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("%s: %v is not errors.Is %v", what, err, sentinel)
	}
}

func suiteFile(company string, created time.Time) *domain.File {
	return &domain.File{ID: uuid.NewString(), Company: company, Owner: "alice", Name: "report <Q1> & notes.pdf", FileType: "document",
		MediaType: "application/pdf", Size: 1234, Status: domain.FileActive, Tags: []string{"finance"},
		ContentHash: "ab12", ObjectKey: "files/" + company + "/x", CreatedAt: created, UpdatedAt: created}
}

func mustCreate(t *testing.T, st library.Store, files ...*domain.File) {
	t.Helper()
	for _, f := range files {
		if err := st.CreateFile(context.Background(), f); err != nil {
			t.Fatalf("create file %s: %v", f.ID, err)
		}
	}
}

// fileRoundTrip: a file reads back as written, never sharing memory with the caller; a taken id
// is a conflict that writes nothing; an unknown id is not found; deletes are idempotent.
func fileRoundTrip(t *testing.T, st library.Store) {
	ctx := context.Background()
	f := suiteFile(Company("acme"), Base.Add(123456789))
	f.Error = "none"
	mustCreate(t, st, f)
	want := *f
	want.Tags = []string{f.Tags[0]}
	f.Tags[0], f.Name = "changed after the write", "changed"
	got, err := st.GetFile(ctx, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("get (-wrote +read):\n%s", d)
	}
	got.Tags[0] = "changed after the read"
	if again, err := st.GetFile(ctx, f.ID); err != nil || again.Tags[0] != "finance" {
		t.Errorf("a read shares memory with the store: %v, %v", again, err)
	}

	dup := suiteFile(Company("globex"), Base)
	dup.ID = f.ID
	WantKind(t, "create of a taken id", st.CreateFile(ctx, dup), domain.KindConflict)
	if got, err := st.GetFile(ctx, f.ID); err != nil || got.Company != want.Company {
		t.Errorf("the refused create wrote: %+v, %v", got, err)
	}

	_, err = st.GetFile(ctx, uuid.NewString())
	WantKind(t, "get of an unknown id", err, domain.KindNotFound)
	for i := range 2 {
		if err := st.DeleteFile(ctx, f.ID); err != nil {
			t.Errorf("delete %d: %v", i+1, err)
		}
	}
	_, err = st.GetFile(ctx, f.ID)
	WantKind(t, "get after delete", err, domain.KindNotFound)
	if err := st.DeleteFile(ctx, uuid.NewString()); err != nil {
		t.Errorf("delete of an unknown id: %v", err)
	}
}

// updateFile: UpdateFile writes only over the version read (UpdatedAt); a stale one is a
// conflict that writes nothing; a deleted file is not found and is not brought back.
func updateFile(t *testing.T, st library.Store) {
	ctx := context.Background()
	f := suiteFile(Company("acme"), Base)
	mustCreate(t, st, f)
	prev := f.UpdatedAt
	next := *f
	next.Status, next.Tags, next.UpdatedAt = domain.FileArchived, []string{}, prev.Add(time.Second)
	if err := st.UpdateFile(ctx, &next, prev); err != nil {
		t.Fatalf("update from the current version: %v", err)
	}
	if got, err := st.GetFile(ctx, f.ID); err != nil || !cmp.Equal(got, &next) {
		t.Errorf("after update: %+v, %v; want %+v", got, err, next)
	}
	stale := next
	stale.Tags, stale.UpdatedAt = []string{"stale"}, prev.Add(2*time.Second)
	WantKind(t, "update from a stale read", st.UpdateFile(ctx, &stale, prev), domain.KindConflict)
	if got, err := st.GetFile(ctx, f.ID); err != nil || len(got.Tags) != 0 {
		t.Errorf("the refused update wrote: %+v, %v", got, err)
	}
	if err := st.DeleteFile(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
	WantKind(t, "update after delete", st.UpdateFile(ctx, &stale, next.UpdatedAt), domain.KindNotFound)
	_, err := st.GetFile(ctx, f.ID)
	WantKind(t, "get after the refused update", err, domain.KindNotFound)
}

// getFiles: a batch read returns the files that exist by id, of any company; unknown, empty and
// repeated ids are no error.
func getFiles(t *testing.T, st library.Store) {
	ctx := context.Background()
	a, b := suiteFile(Company("acme"), Base), suiteFile(Company("globex"), Base)
	mustCreate(t, st, a, b)
	got, err := st.GetFiles(ctx, []string{a.ID, uuid.NewString(), b.ID, a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]*domain.File{a.ID: a, b.ID: b}, got); d != "" {
		t.Errorf("batch read (-want +got):\n%s", d)
	}
	if got, err := st.GetFiles(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("no ids: %v, %v", got, err)
	}
}

// pageAll reads a list a page at a time until its cursor is "", and returns the ids in order.
func pageAll[T any](t *testing.T, list func(after string, limit int) ([]T, string, error), id func(T) string, limit int) []string {
	t.Helper()
	var ids []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the cursors never end")
		}
		recs, next, err := list(after, limit)
		if err != nil {
			t.Fatalf("page after %q: %v", after, err)
		}
		if len(recs) > limit {
			t.Errorf("page of %d records, limit %d", len(recs), limit)
		}
		if next != "" && len(recs) < limit {
			t.Errorf("a short page (%d of %d) with a cursor %q", len(recs), limit, next)
		}
		for _, r := range recs {
			ids = append(ids, id(r))
		}
		if next == "" {
			return ids
		}
		after = next
	}
}

// listFilesPages: a company's files come newest first (ties by id, descending) a page at a time,
// each once; another company's never.
func listFilesPages(t *testing.T, st library.Store) {
	ctx := context.Background()
	acme, globex := Company("acme"), Company("globex")
	var files []*domain.File
	for i, off := range []time.Duration{0, 100 * time.Millisecond, 120 * time.Millisecond, time.Second, time.Second, time.Second, 2 * time.Second} {
		f := suiteFile(acme, Base.Add(off))
		files = append(files, f)
		mustCreate(t, st, suiteFile(globex, Base.Add(off+time.Duration(i)*time.Millisecond)))
	}
	mustCreate(t, st, files...)
	want := newestFirst(files, func(f *domain.File) (time.Time, string) { return f.CreatedAt, f.ID })
	for _, limit := range []int{1, 3, 7, 10} {
		got := pageAll(t, func(after string, n int) ([]*domain.File, string, error) { return st.ListFiles(ctx, acme, after, n) },
			func(f *domain.File) string { return f.ID }, limit)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("limit %d: acme's files across pages (-want +got):\n%s", limit, d)
		}
	}
	page, next, err := st.ListFiles(ctx, acme, "", 0)
	if err != nil || len(page) != 1 || page[0].ID != want[0] || next == "" {
		t.Errorf("limit 0: %d files, next %q, %v; want the newest alone and a cursor", len(page), next, err)
	}
	page, next, err = st.ListFiles(ctx, Company("initech"), "", 10)
	if err != nil || len(page) != 0 || next != "" {
		t.Errorf("a company without files: %v, %q, %v", page, next, err)
	}
}

// newestFirst sorts ids newest first, ties by id descending (the order of the lists' keys).
func newestFirst[T any](recs []T, key func(T) (time.Time, string)) []string {
	type k struct {
		at time.Time
		id string
	}
	ks := make([]k, len(recs))
	for i, r := range recs {
		ks[i].at, ks[i].id = key(r)
	}
	for i := range ks { // insertion sort: the lists are short
		for j := i; j > 0; j-- {
			a, b := ks[j-1], ks[j]
			if a.at.After(b.at) || (a.at.Equal(b.at) && a.id > b.id) {
				break
			}
			ks[j-1], ks[j] = b, a
		}
	}
	ids := make([]string, len(ks))
	for i, x := range ks {
		ids[i] = x.id
	}
	return ids
}

// lastPage: a page shorter than its limit ends the list (""); a full page carries a cursor even
// when nothing follows, as a DynamoDB Query stopped by its Limit does, and the page after it is
// empty and ends the list.
func lastPage(t *testing.T, st library.Store) {
	ctx := context.Background()
	acme := Company("acme")
	for i := range 3 {
		mustCreate(t, st, suiteFile(acme, Base.Add(time.Duration(i)*time.Second)))
	}
	page, next, err := st.ListFiles(ctx, acme, "", 4)
	if err != nil || len(page) != 3 || next != "" {
		t.Errorf("limit 4 of 3: %d files, next %q, %v; want 3 and the end", len(page), next, err)
	}
	page, next, err = st.ListFiles(ctx, acme, "", 3)
	if err != nil || len(page) != 3 || next == "" {
		t.Fatalf("limit 3 of 3: %d files, next %q, %v; want 3 and a cursor", len(page), next, err)
	}
	page, next, err = st.ListFiles(ctx, acme, next, 3)
	if err != nil || len(page) != 0 || next != "" {
		t.Errorf("the page after a full last page: %d files, next %q, %v; want none and the end", len(page), next, err)
	}
}

// cursor: a cursor is a position in the order, so a page after a record deleted since goes on
// from where it was; a cursor not made by the store is invalid.
func cursor(t *testing.T, st library.Store) {
	ctx := context.Background()
	acme := Company("acme")
	var files []*domain.File
	for i := range 5 {
		f := suiteFile(acme, Base.Add(time.Duration(i)*time.Second))
		mustCreate(t, st, f)
		files = append(files, f)
	}
	page, next, err := st.ListFiles(ctx, acme, "", 2)
	if err != nil || len(page) != 2 || next == "" {
		t.Fatalf("first page: %d, %q, %v", len(page), next, err)
	}
	if err := st.DeleteFile(ctx, page[1].ID); err != nil {
		t.Fatal(err)
	}
	page, _, err = st.ListFiles(ctx, acme, next, 2)
	if err != nil || len(page) != 2 || page[0].ID != files[2].ID || page[1].ID != files[1].ID {
		t.Errorf("the page after a deleted record: %v, %v; want files 2 and 1", page, err)
	}
	for _, bad := range []string{"not-a-cursor", "2026-11-23T09:00:00.000000000Z#not-an-id", "#"} {
		_, _, err := st.ListFiles(ctx, acme, bad, 2)
		WantKind(t, "cursor "+bad, err, domain.KindInvalid)
		_, _, err = st.ListCollections(ctx, acme, bad, 2)
		WantKind(t, "collections' cursor "+bad, err, domain.KindInvalid)
	}
}

func suiteCollection(company string, created time.Time) *domain.Collection {
	return &domain.Collection{ID: uuid.NewString(), Company: company, Owner: "alice", Name: "docs", Description: "d",
		FileIDs: []string{uuid.NewString()}, TotalSize: 10, CreatedAt: created, UpdatedAt: created}
}

// collections: a collection reads back as put (a put overwrites); UpdateCollection writes only
// over the version read, a stale one is a conflict that writes nothing, a deleted one not found;
// deletes are idempotent.
func collections(t *testing.T, st library.Store) {
	ctx := context.Background()
	c := suiteCollection(Company("acme"), Base)
	if err := st.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetCollection(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(c, got); d != "" {
		t.Errorf("get (-put +got):\n%s", d)
	}
	c.Name = "renamed"
	if err := st.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, err := st.GetCollection(ctx, c.ID); err != nil || got.Name != "renamed" {
		t.Errorf("after a second put: %+v, %v", got, err)
	}
	_, err = st.GetCollection(ctx, uuid.NewString())
	WantKind(t, "get of an unknown id", err, domain.KindNotFound)

	first, second := *c, *c
	first.FileIDs, first.UpdatedAt = []string{"f1", "f2"}, c.UpdatedAt.Add(time.Second)
	second.FileIDs, second.UpdatedAt = []string{"f1", "f3"}, c.UpdatedAt.Add(2*time.Second)
	if err := st.UpdateCollection(ctx, &first, c.UpdatedAt); err != nil {
		t.Fatalf("first writer: %v", err)
	}
	WantKind(t, "second writer of the same version", st.UpdateCollection(ctx, &second, c.UpdatedAt), domain.KindConflict)
	if got, err := st.GetCollection(ctx, c.ID); err != nil || !cmp.Equal(got.FileIDs, first.FileIDs) {
		t.Errorf("after the refused update: %+v, %v (the first writer's files must stay)", got, err)
	}
	if err := st.UpdateCollection(ctx, &second, first.UpdatedAt); err != nil {
		t.Errorf("update after reading again: %v", err)
	}
	for i := range 2 {
		if err := st.DeleteCollection(ctx, c.ID); err != nil {
			t.Errorf("delete %d: %v", i+1, err)
		}
	}
	WantKind(t, "update of a deleted collection", st.UpdateCollection(ctx, &second, second.UpdatedAt), domain.KindNotFound)
	_, err = st.GetCollection(ctx, c.ID)
	WantKind(t, "get after the refused update", err, domain.KindNotFound)
}

// listCollectionsPages: a company's collections come newest first a page at a time, each once;
// another company's never.
func listCollectionsPages(t *testing.T, st library.Store) {
	ctx := context.Background()
	acme, globex := Company("acme"), Company("globex")
	var colls []*domain.Collection
	for i := range 5 {
		c := suiteCollection(acme, Base.Add(time.Duration(i%3)*time.Second))
		colls = append(colls, c)
		for _, x := range []*domain.Collection{c, suiteCollection(globex, Base.Add(time.Duration(i)*time.Second))} {
			if err := st.PutCollection(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := newestFirst(colls, func(c *domain.Collection) (time.Time, string) { return c.CreatedAt, c.ID })
	for _, limit := range []int{2, 5, 100} {
		got := pageAll(t, func(after string, n int) ([]*domain.Collection, string, error) {
			return st.ListCollections(ctx, acme, after, n)
		}, func(c *domain.Collection) string { return c.ID }, limit)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("limit %d: acme's collections across pages (-want +got):\n%s", limit, d)
		}
	}
}

// tooLarge: a record past DynamoDB's 400 KB is KindTooLarge and writes nothing.
func tooLarge(t *testing.T, st library.Store) {
	ctx := context.Background()
	many := make([]string, 12000) // 12,000 ids: about 470 KB
	for i := range many {
		many[i] = uuid.NewString()
	}
	c := suiteCollection(Company("acme"), Base)
	big := *c
	big.FileIDs = many
	WantKind(t, "put of a collection past 400 KB", st.PutCollection(ctx, &big), domain.KindTooLarge)
	_, err := st.GetCollection(ctx, c.ID)
	WantKind(t, "get of the refused collection", err, domain.KindNotFound)
	if err := st.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	big.UpdatedAt = c.UpdatedAt.Add(time.Second)
	WantKind(t, "update to a collection past 400 KB", st.UpdateCollection(ctx, &big, c.UpdatedAt), domain.KindTooLarge)
	if got, err := st.GetCollection(ctx, c.ID); err != nil || len(got.FileIDs) != 1 {
		t.Errorf("the refused update wrote: %d files, %v", len(got.FileIDs), err)
	}

	f := suiteFile(c.Company, Base)
	huge := *f
	huge.Tags = many
	WantKind(t, "create of a file past 400 KB", st.CreateFile(ctx, &huge), domain.KindTooLarge)
	_, err = st.GetFile(ctx, f.ID)
	WantKind(t, "get of the refused file", err, domain.KindNotFound)
	mustCreate(t, st, f)
	huge.UpdatedAt = f.UpdatedAt.Add(time.Second)
	WantKind(t, "update to a file past 400 KB", st.UpdateFile(ctx, &huge, f.UpdatedAt), domain.KindTooLarge)
	if got, err := st.GetFile(ctx, f.ID); err != nil || len(got.Tags) != 1 {
		t.Errorf("the refused update wrote: %d tags, %v", len(got.Tags), err)
	}
}
