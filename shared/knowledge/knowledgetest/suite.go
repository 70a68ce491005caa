package knowledgetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library/librarytest"
)

// StoreSuite holds the knowledge bases of a knowledge.Store to the port's contract: not-found
// and conflict kinds, the run condition of UpdateKB and UpdateSource (a superseded run never
// writes over its successor), concurrent datasource writes, companies kept apart, pages, deletes,
// and the item-size account of UpdateSource (a datasource over 4 KB, or one that grows a full
// record, is KindTooLarge; a write that does not grow it passes). Files and collections are
// librarytest.StoreSuite's. It runs against the fake (Store) and against the DynamoDB adapter
// on DynamoDB Local. newStore may return one store to every subtest: each makes up its own
// companies and ids.
func StoreSuite(t *testing.T, newStore func(t *testing.T) knowledge.Store) {
	t.Run("KBRoundTrip", func(t *testing.T) { kbRoundTrip(t, newStore(t)) })
	t.Run("ListKBsPages", func(t *testing.T) { listKBsPages(t, newStore(t)) })
	t.Run("UpdateKBRun", func(t *testing.T) { updateKBRun(t, newStore(t)) })
	t.Run("UpdateSource", func(t *testing.T) { updateSource(t, newStore(t)) })
	t.Run("UpdateSourceConcurrent", func(t *testing.T) { updateSourceConcurrent(t, newStore(t)) })
	t.Run("DatasourceTooLarge", func(t *testing.T) { datasourceTooLarge(t, newStore(t)) })
	t.Run("RoomAccount", func(t *testing.T) { roomAccount(t, newStore(t)) })
}

var wantKind = librarytest.WantKind

func suiteKB(company, runID string, created time.Time, files ...string) *domain.KnowledgeBase {
	kb := &domain.KnowledgeBase{ID: uuid.NewString(), Company: company, Owner: "alice", Name: "kb", Engine: domain.EngineOpenSearch,
		Collections: []string{}, Files: files, Chunking: domain.Chunking{Strategy: "recursive", ChunkSize: 1000, ChunkOverlap: 100},
		Embedding: domain.Embedding{Provider: "local", Model: "use-lite", Dimensions: 512}, Index: "agentorch-kb-use-lite-512",
		Status: domain.KBRunning, Sources: map[string]*domain.Datasource{}, RunID: runID, RunStarted: &created,
		StatusChanged: created, CreatedAt: created, UpdatedAt: created}
	for _, f := range files {
		kb.Sources[f] = &domain.Datasource{FileID: f, Name: f + ".txt", Status: domain.IngestPending}
	}
	return kb
}

func mustPut(t *testing.T, st knowledge.Store, kbs ...*domain.KnowledgeBase) {
	t.Helper()
	for _, kb := range kbs {
		if err := st.PutKB(context.Background(), kb); err != nil {
			t.Fatalf("put knowledge base %s: %v", kb.ID, err)
		}
	}
}

// kbRoundTrip: a knowledge base reads back with its datasources as put, never sharing memory
// with the caller (no sources read as an empty map); a put overwrites; an unknown id is not
// found; deletes are idempotent.
func kbRoundTrip(t *testing.T, st knowledge.Store) {
	ctx := context.Background()
	f1 := uuid.NewString()
	kb := suiteKB(librarytest.Company("acme"), "run-1", librarytest.Base, f1, uuid.NewString())
	// Every field set, so that none is lost on the way.
	deadline, done, at := librarytest.Base.Add(time.Hour), librarytest.Base.Add(time.Minute), librarytest.Base.Add(time.Second)
	kb.Description, kb.Chunking.SplitBy, kb.Chunking.RecursiveSeparators = "d", "sentence", []string{"\n\n", "\n"}
	kb.Chunking.ContextualHeaders = true
	kb.Metadata = domain.ProcessingMetadata{Phase: "indexing", TotalChunks: 10, ProcessedChunks: 4, Message: "m"}
	kb.SourcesRun, kb.RunDeadline, kb.Completed, kb.Error = "run-1", &deadline, &done, "e"
	kb.Sources[f1] = &domain.Datasource{FileID: f1, Name: "a <b> & c.txt", Status: domain.IngestFailed, Error: "no text",
		ContentHash: "c0ffee", ContextualHeaders: true, Chunks: 3, Attempts: 2, Phase: "indexing", TotalChunks: 3, ProcessedChunks: 1, Residue: true, UpdatedAt: &at}
	mustPut(t, st, kb)
	want := *kb
	kb.Sources = map[string]*domain.Datasource{}
	got, err := st.GetKB(ctx, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("get (-put +got):\n%s", d)
	}
	for id := range got.Sources {
		delete(got.Sources, id)
	}
	if again, err := st.GetKB(ctx, kb.ID); err != nil || len(again.Sources) != 2 {
		t.Errorf("a read shares memory with the store: %+v, %v", again, err)
	}

	bare := suiteKB(kb.Company, "run-1", librarytest.Base)
	bare.Sources = nil
	mustPut(t, st, bare)
	if got, err := st.GetKB(ctx, bare.ID); err != nil || got.Sources == nil || len(got.Sources) != 0 {
		t.Errorf("no sources read back as %#v, %v; want an empty map", got.Sources, err)
	}
	bare.Name, bare.Status = "renamed", domain.KBCompleted
	mustPut(t, st, bare)
	if got, err := st.GetKB(ctx, bare.ID); err != nil || got.Name != "renamed" || got.Status != domain.KBCompleted {
		t.Errorf("after a second put: %+v, %v", got, err)
	}

	_, err = st.GetKB(ctx, uuid.NewString())
	wantKind(t, "get of an unknown id", err, domain.KindNotFound)
	for i := range 2 {
		if err := st.DeleteKB(ctx, kb.ID); err != nil {
			t.Errorf("delete %d: %v", i+1, err)
		}
	}
	_, err = st.GetKB(ctx, kb.ID)
	wantKind(t, "get after delete", err, domain.KindNotFound)
}

// listKBsPages: a company's knowledge bases come newest first with their datasources, a page at
// a time, each once; another company's never; a malformed cursor is invalid.
func listKBsPages(t *testing.T, st knowledge.Store) {
	ctx := context.Background()
	acme, globex := librarytest.Company("acme"), librarytest.Company("globex")
	var want []string
	for i := range 5 {
		kb := suiteKB(acme, "run-1", librarytest.Base.Add(time.Duration(i)*time.Second), uuid.NewString())
		mustPut(t, st, kb, suiteKB(globex, "run-1", librarytest.Base.Add(time.Duration(i)*time.Second)))
		want = append([]string{kb.ID}, want...)
	}
	var got []string
	after := ""
	for {
		page, next, err := st.ListKBs(ctx, acme, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, kb := range page {
			got = append(got, kb.ID)
			if kb.Company != acme || len(kb.Sources) != 1 {
				t.Errorf("listed %s of %s with %d sources", kb.ID, kb.Company, len(kb.Sources))
			}
		}
		if next == "" || len(got) > len(want) {
			break
		}
		after = next
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("acme's knowledge bases across pages (-want +got):\n%s", d)
	}
	page, next, err := st.ListKBs(ctx, acme, "", 5)
	if err != nil || len(page) != 5 || next == "" {
		t.Errorf("a full last page: %d, %q, %v; want 5 and a cursor", len(page), next, err)
	}
	if page, next, err = st.ListKBs(ctx, acme, next, 5); err != nil || len(page) != 0 || next != "" {
		t.Errorf("after a full last page: %d, %q, %v; want none and the end", len(page), next, err)
	}
	_, _, err = st.ListKBs(ctx, acme, "not-a-cursor", 2)
	wantKind(t, "malformed cursor", err, domain.KindInvalid)
}

// updateKBRun: UpdateKB writes only while runID is the stored run; a sync that starts a new run
// supersedes the old one, whose writes are then conflicts that write nothing; a deleted
// knowledge base is not found and not brought back. It replaces the datasources whole.
func updateKBRun(t *testing.T, st knowledge.Store) {
	ctx := context.Background()
	kb := suiteKB(librarytest.Company("acme"), "run-1", librarytest.Base, "f1", "f2")
	mustPut(t, st, kb)
	next := *kb
	next.RunID, next.Sources = "run-2", map[string]*domain.Datasource{"f3": {FileID: "f3", Status: domain.IngestPending}}
	if err := st.UpdateKB(ctx, &next, "run-1"); err != nil {
		t.Fatalf("start run-2: %v", err)
	}
	stale := *kb
	stale.Status = domain.KBCompleted
	wantKind(t, "superseded run's update", st.UpdateKB(ctx, &stale, "run-1"), domain.KindConflict)
	cur, err := st.GetKB(ctx, kb.ID)
	if err != nil || cur.RunID != "run-2" || cur.Status != domain.KBRunning || len(cur.Sources) != 1 || cur.Sources["f3"] == nil {
		t.Errorf("after the refused update: %+v, %v", cur, err)
	}
	if err := st.DeleteKB(ctx, kb.ID); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "update of a deleted knowledge base", st.UpdateKB(ctx, &next, "run-2"), domain.KindNotFound)
	_, err = st.GetKB(ctx, kb.ID)
	wantKind(t, "get after the refused update", err, domain.KindNotFound)
}

// updateSource: UpdateSource sets one datasource of the current run and returns the record after
// the write (the others kept, its UpdatedAt the datasource's); a superseded run is a conflict
// and a deleted knowledge base not found, both writing nothing; a datasource without a file id
// is an error.
func updateSource(t *testing.T, st knowledge.Store) {
	ctx := context.Background()
	kb := suiteKB(librarytest.Company("acme"), "run-1", librarytest.Base, "f1", "f2")
	mustPut(t, st, kb)
	at := librarytest.Base.Add(time.Minute)
	d := &domain.Datasource{FileID: "f1", Name: "a <b> & c.txt", Status: domain.IngestIngested, Chunks: 3, Attempts: 1,
		ContentHash: "c0ffee", ContextualHeaders: true, Phase: "indexing", TotalChunks: 3, ProcessedChunks: 3, Residue: true, UpdatedAt: &at}
	got, err := st.UpdateSource(ctx, kb.ID, "run-1", d)
	if err != nil {
		t.Fatal(err)
	}
	want := *kb
	want.Sources = map[string]*domain.Datasource{"f1": d, "f2": kb.Sources["f2"]}
	want.UpdatedAt = at
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("returned record (-want +got):\n%s", diff)
	}
	if read, err := st.GetKB(ctx, kb.ID); err != nil || !cmp.Equal(read, got) {
		t.Errorf("read after the write: %s, %v", cmp.Diff(got, read), err)
	}
	// A new datasource of the run is added.
	if got, err := st.UpdateSource(ctx, kb.ID, "run-1", &domain.Datasource{FileID: "f9", Status: domain.IngestPending}); err != nil || len(got.Sources) != 3 {
		t.Errorf("a new datasource: %v, %v", got, err)
	}

	next := *kb
	next.RunID = "run-2"
	if err := st.UpdateKB(ctx, &next, "run-1"); err != nil {
		t.Fatal(err)
	}
	late := &domain.Datasource{FileID: "f2", Status: domain.IngestFailed, Error: "late"}
	_, err = st.UpdateSource(ctx, kb.ID, "run-1", late)
	wantKind(t, "superseded run", err, domain.KindConflict)
	if cur, err := st.GetKB(ctx, kb.ID); err != nil || cur.Sources["f2"].Status != domain.IngestPending {
		t.Errorf("the superseded run wrote: %+v, %v", cur.Sources["f2"], err)
	}
	if _, err := st.UpdateSource(ctx, kb.ID, "run-2", late); err != nil {
		t.Errorf("the current run: %v", err)
	}
	if _, err := st.UpdateSource(ctx, kb.ID, "run-2", &domain.Datasource{Status: domain.IngestPending}); err == nil {
		t.Error("a datasource without a file id was written")
	}
	if err := st.DeleteKB(ctx, kb.ID); err != nil {
		t.Fatal(err)
	}
	_, err = st.UpdateSource(ctx, kb.ID, "run-2", late)
	wantKind(t, "deleted knowledge base", err, domain.KindNotFound)
	_, err = st.GetKB(ctx, kb.ID)
	wantKind(t, "get after the refused write", err, domain.KindNotFound)
}

// updateSourceConcurrent: 20 workers of one run set 20 datasources at once and no write is lost.
func updateSourceConcurrent(t *testing.T, st knowledge.Store) {
	ctx := context.Background()
	var files []string
	for i := range 20 {
		files = append(files, fmt.Sprintf("file-%02d", i))
	}
	kb := suiteKB(librarytest.Company("acme"), "run-1", librarytest.Base, files...)
	mustPut(t, st, kb)
	var wg sync.WaitGroup
	errs := make([]error, len(files))
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = st.UpdateSource(ctx, kb.ID, "run-1", &domain.Datasource{FileID: f, Status: domain.IngestIngested, Chunks: i + 1})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
	got, err := st.GetKB(ctx, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if d := got.Sources[f]; d == nil || d.Status != domain.IngestIngested || d.Chunks != i+1 {
			t.Errorf("datasource %s after the concurrent writes: %+v", f, d)
		}
	}
}

// datasourceTooLarge: a datasource over 4 KB is KindTooLarge and writes nothing; so is a whole
// record past DynamoDB's 400 KB.
func datasourceTooLarge(t *testing.T, st knowledge.Store) {
	ctx := context.Background()
	kb := suiteKB(librarytest.Company("acme"), "run-1", librarytest.Base, "f1")
	mustPut(t, st, kb)
	big := &domain.Datasource{FileID: "f1", Status: domain.IngestFailed, Error: strings.Repeat("x", 5000)}
	_, err := st.UpdateSource(ctx, kb.ID, "run-1", big)
	wantKind(t, "a datasource over 4 KB", err, domain.KindTooLarge)
	if got, err := st.GetKB(ctx, kb.ID); err != nil || got.Sources["f1"].Status != domain.IngestPending {
		t.Errorf("the refused datasource was written: %+v, %v", got.Sources["f1"], err)
	}
	huge := suiteKB(kb.Company, "run-1", librarytest.Base)
	for i := range 110 {
		id := fmt.Sprintf("f%03d", i)
		huge.Sources[id] = &domain.Datasource{FileID: id, Status: domain.IngestFailed, Error: strings.Repeat("e", 3900)}
	}
	wantKind(t, "a record past 400 KB", st.PutKB(ctx, huge), domain.KindTooLarge)
	_, err = st.GetKB(ctx, huge.ID)
	wantKind(t, "get of the refused record", err, domain.KindNotFound)
	huge.ID, huge.RunID = kb.ID, "run-2"
	wantKind(t, "an update past 400 KB", st.UpdateKB(ctx, huge, "run-1"), domain.KindTooLarge)
	if got, err := st.GetKB(ctx, kb.ID); err != nil || got.RunID != "run-1" {
		t.Errorf("the refused update wrote: %+v, %v", got, err)
	}
}

// roomAccount: in a record near 400 KB, datasources that grow it are written while room is
// left and then refused with KindTooLarge (never a failure of another kind: the item never
// passes DynamoDB's limit); a datasource whose JSON is no longer than the one it replaces is
// still written; a full write that drops datasources makes room again.
func roomAccount(t *testing.T, st knowledge.Store) {
	ctx := context.Background()
	kb := suiteKB(librarytest.Company("acme"), "run-1", librarytest.Base)
	filler := func(id string, n int) *domain.Datasource {
		return &domain.Datasource{FileID: id, Status: domain.IngestFailed, Error: strings.Repeat("e", n)}
	}
	for i := range 95 {
		id := fmt.Sprintf("f%03d", i)
		kb.Sources[id] = filler(id, 3900)
	}
	mustPut(t, st, kb)
	grown := 0
	for ; ; grown++ {
		if grown > 20 {
			t.Fatal("20 datasources of 4 KB were written over a record of 380 KB")
		}
		id := fmt.Sprintf("g%03d", grown)
		_, err := st.UpdateSource(ctx, kb.ID, "run-1", filler(id, 3900))
		if err == nil {
			continue
		}
		wantKind(t, "a datasource past the room", err, domain.KindTooLarge)
		if got, err := st.GetKB(ctx, kb.ID); err != nil || got.Sources[id] != nil {
			t.Errorf("the refused datasource was written: %v", err)
		}
		break
	}
	if grown == 0 {
		t.Error("no room for one datasource in a record of 380 KB")
	}
	t.Logf("%d datasources of 4 KB grew the record before it was full", grown)
	if _, err := st.UpdateSource(ctx, kb.ID, "run-1", filler("f000", 3900)); err != nil {
		t.Errorf("a datasource as long as the one it replaces, without room: %v", err)
	}
	_, err := st.UpdateSource(ctx, kb.ID, "run-1", filler("f002", 3950))
	wantKind(t, "a longer datasource without room", err, domain.KindTooLarge)
	if _, err := st.UpdateSource(ctx, kb.ID, "run-1", filler("f001", 100)); err != nil {
		t.Errorf("a shorter datasource, without room: %v", err)
	}

	cur, err := st.GetKB(ctx, kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		delete(cur.Sources, fmt.Sprintf("f%03d", 10+i))
	}
	if err := st.UpdateKB(ctx, cur, "run-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateSource(ctx, kb.ID, "run-1", filler("new", 3900)); err != nil {
		t.Errorf("after a full write made room: %v", err)
	}
}
