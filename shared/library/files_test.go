package library_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
)

var ctx = context.Background()

// pngHead is the signature and header of a PNG image.
var pngHead = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestUpload: the bytes go to S3 under the company's prefix, the record is active with the type
// the bytes show (not the name or the declared type), its size and hash, the base name and the
// cleaned tags; one Put and one CreateFile.
func TestUpload(t *testing.T) {
	h := newTestService(t)
	f, err := h.Svc.Upload(ctx, alice, library.Upload{Name: `../../etc/C:\docs\photo.txt`, Data: pngHead,
		DeclaredType: "text/plain", Tags: []string{" manual ", "", "product", "manual"}})
	if err != nil {
		t.Fatal(err)
	}
	want := &domain.File{ID: f.ID, Company: "acme", Owner: "alice", Name: "photo.txt", FileType: "image", MediaType: "image/png",
		Size: int64(len(pngHead)), Status: "active", Tags: []string{"manual", "product"}, ContentHash: sha(pngHead),
		ObjectKey: "files/acme/" + f.ID, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
	if d := cmp.Diff(want, f); d != "" {
		t.Errorf("file (-want +got):\n%s", d)
	}
	if !domain.IsID(f.ID) || f.CreatedAt.IsZero() {
		t.Errorf("id %q, created_at %v", f.ID, f.CreatedAt)
	}
	key := "files/acme/" + f.ID
	if got := h.Blobs.Keys(); !cmp.Equal(got, []string{key}) {
		t.Errorf("stored keys = %v, want [%s]", got, key)
	}
	if data, _, err := h.Blobs.Get(ctx, key, 1<<20); err != nil || !bytes.Equal(data, pngHead) {
		t.Errorf("stored bytes = %q, %v", data, err)
	}
	if got, err := h.Svc.GetFile(ctx, bob, f.ID); err != nil || !cmp.Equal(got, f) {
		t.Errorf("GetFile by a colleague = %+v, %v", got, err)
	}
	if h.Store.Get("CreateFile") != 1 || h.Blobs.Counts.Get("Put") != 1 {
		t.Errorf("CreateFile %d, Put %d, want 1 each", h.Store.Get("CreateFile"), h.Blobs.Counts.Get("Put"))
	}
	text := upload(t, h, alice, "notes.md", "# Notes\n\nplain words\n")
	if text.MediaType != "text/markdown" || text.FileType != "document" {
		t.Errorf("markdown file = %+v", text)
	}
}

// TestUploadRejects: each bad upload is its 4xx and stores nothing.
func TestUploadRejects(t *testing.T) {
	h := newTestService(t)
	mine := collection(t, h, alice, "mine")
	theirs := collection(t, h, eve, "theirs")
	data := []byte("hello")
	long := strings.Repeat("é", library.MaxFileNameLength+1) + ".txt"
	manyTags := make([]string, library.MaxTags+1)
	for i := range manyTags {
		manyTags[i] = "t" + strconv.Itoa(i)
	}
	tests := []struct {
		name  string
		in    library.Upload
		kind  domain.Kind
		field string
	}{
		{"no data", library.Upload{Name: "a.txt"}, domain.KindInvalid, "file"},
		{"empty data", library.Upload{Name: "a.txt", Data: []byte{}}, domain.KindInvalid, "file"},
		{"too large", library.Upload{Name: "a.txt", Data: bytes.Repeat([]byte("a"), library.MaxUploadBytes+1)}, domain.KindTooLarge, ""},
		{"no name", library.Upload{Data: data}, domain.KindInvalid, "file"},
		{"name of spaces", library.Upload{Name: "  ", Data: data}, domain.KindInvalid, "file"},
		{"name a directory", library.Upload{Name: "docs/..", Data: data}, domain.KindInvalid, "file"},
		{"name ending in a slash", library.Upload{Name: "docs/", Data: data}, domain.KindInvalid, "file"},
		{"name with a control character", library.Upload{Name: "a\x00.txt", Data: data}, domain.KindInvalid, "file"},
		{"name of invalid UTF-8", library.Upload{Name: "a\xff.txt", Data: data}, domain.KindInvalid, "file"},
		{"name too long", library.Upload{Name: long, Data: data}, domain.KindInvalid, "file"},
		{"too many tags", library.Upload{Name: "a.txt", Data: data, Tags: manyTags}, domain.KindInvalid, "tags"},
		{"tag too long", library.Upload{Name: "a.txt", Data: data, Tags: []string{strings.Repeat("x", library.MaxTagLength+1)}}, domain.KindInvalid, "tags"},
		{"tag with a newline", library.Upload{Name: "a.txt", Data: data, Tags: []string{"a\nb"}}, domain.KindInvalid, "tags"},
		{"foreign collection", library.Upload{Name: "a.txt", Data: data, CollectionID: theirs.ID}, domain.KindNotFound, ""},
		{"unknown collection", library.Upload{Name: "a.txt", Data: data, CollectionID: unknownID}, domain.KindNotFound, ""},
		{"malformed collection id", library.Upload{Name: "a.txt", Data: data, CollectionID: "coll-1"}, domain.KindNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Svc.Upload(ctx, alice, tt.in)
			wantErr(t, err, tt.kind, tt.field)
			if keys := h.Blobs.Keys(); len(keys) != 0 {
				t.Errorf("stored %v", keys)
			}
			if files, _, _ := h.Svc.ListFiles(ctx, alice, library.FileFilter{}); len(files) != 0 {
				t.Errorf("recorded %d files", len(files))
			}
		})
	}
	if got, _ := h.Svc.GetCollection(ctx, alice, mine.ID); len(got.Files) != 0 {
		t.Errorf("collection = %+v", got)
	}
	// The limit itself is allowed.
	if _, err := h.Svc.Upload(ctx, alice, library.Upload{Name: "max.txt", Data: bytes.Repeat([]byte("a"), library.MaxUploadBytes)}); err != nil {
		t.Errorf("upload of exactly the limit: %v", err)
	}
}

// TestUploadIntoCollection: a file uploaded with collection_id joins the collection; when the
// collection goes away between the check and the update, the upload is taken back whole.
func TestUploadIntoCollection(t *testing.T) {
	h, hs, _ := withHooks(t)
	c := collection(t, h, alice, "docs")
	f, err := h.Svc.Upload(ctx, alice, library.Upload{Name: "a.txt", Data: []byte("alpha"), CollectionID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.Svc.GetCollection(ctx, alice, c.ID)
	if err != nil || summary(got) != (domain.CollectionSummary{Status: "completed", Progress: 100, Files: 1, Size: 5}) || got.Files[0].ID != f.ID {
		t.Fatalf("collection = %+v, %v", got, err)
	}

	hs.beforeUpdate = func(int, *domain.Collection) error {
		return h.Store.DeleteCollection(ctx, c.ID)
	}
	_, err = h.Svc.Upload(ctx, alice, library.Upload{Name: "b.txt", Data: []byte("beta"), CollectionID: c.ID})
	wantErr(t, err, domain.KindNotFound, "")
	files, _, _ := h.Svc.ListFiles(ctx, alice, library.FileFilter{})
	if len(files) != 1 || files[0].ID != f.ID {
		t.Errorf("files after the refused upload = %+v", files)
	}
	if keys := h.Blobs.Keys(); !cmp.Equal(keys, []string{"files/acme/" + f.ID}) {
		t.Errorf("stored keys = %v", keys)
	}
}

// TestUploadPresigned: a presigned upload is recorded uploading and answers the PUT to make, with
// the headers S3 signs; bad input is a 400 naming the field, or 413 naming the limit.
func TestUploadPresigned(t *testing.T) {
	h := newTestService(t)
	up, err := h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: "big.pdf", Size: 1000, MediaType: "application/pdf", Tags: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := h.Svc.GetFile(ctx, alice, up.FileID)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status != "uploading" || f.Size != 1000 || f.Name != "big.pdf" || f.ContentHash != "" || !cmp.Equal(f.Tags, []string{"x"}) {
		t.Errorf("file = %+v", f)
	}
	want := &library.PendingUpload{FileID: f.ID, Method: "PUT", UploadURL: "mem://uploads/acme/" + f.ID + "?size=1000&type=application/pdf",
		Headers: map[string]string{"Content-Type": "application/pdf", "Content-Length": "1000"}, ExpiresAt: f.CreatedAt.Add(library.PresignTTL)}
	if d := cmp.Diff(want, up); d != "" {
		t.Errorf("pending upload (-want +got):\n%s", d)
	}
	if up2, err := h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: "blob", Size: library.MaxPresignedBytes}); err != nil ||
		up2.Headers["Content-Type"] != "application/octet-stream" {
		t.Errorf("upload of the limit without a media type = %+v, %v", up2, err)
	}

	before := h.Store.Get("CreateFile")
	for _, tt := range []struct {
		name  string
		in    library.StartUpload
		kind  domain.Kind
		field string
		msg   string
	}{
		{"no name", library.StartUpload{Size: 10}, domain.KindInvalid, "name", ""},
		{"size 0", library.StartUpload{Name: "a", Size: 0}, domain.KindInvalid, "size", ""},
		{"negative size", library.StartUpload{Name: "a", Size: -5}, domain.KindInvalid, "size", ""},
		{"over the limit", library.StartUpload{Name: "a", Size: library.MaxPresignedBytes + 1}, domain.KindTooLarge, "", strconv.Itoa(library.MaxPresignedBytes)},
		{"media type without a slash", library.StartUpload{Name: "a", Size: 10, MediaType: "pdf"}, domain.KindInvalid, "media_type", ""},
		{"media type malformed", library.StartUpload{Name: "a", Size: 10, MediaType: "text/plain; charset"}, domain.KindInvalid, "media_type", ""},
		{"tag too long", library.StartUpload{Name: "a", Size: 10, Tags: []string{strings.Repeat("t", 65)}}, domain.KindInvalid, "tags", ""},
		{"foreign collection", library.StartUpload{Name: "a", Size: 10, CollectionID: collection(t, h, eve, "e").ID}, domain.KindNotFound, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Svc.StartUpload(ctx, alice, tt.in)
			wantErr(t, err, tt.kind, tt.field, tt.msg)
		})
	}
	if n := h.Store.Get("CreateFile"); n != before {
		t.Errorf("refused uploads wrote %d records", n-before)
	}
}

// TestUploadComplete: after the PUT, complete judges the bytes, hashes them and makes the file
// active; completing again answers the same record and writes nothing.
func TestUploadComplete(t *testing.T) {
	h := newTestService(t)
	data := []byte("%PDF-1.4\n" + strings.Repeat("stream of bytes\n", 50))
	up, err := h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: "report.bin", Size: int64(len(data)), MediaType: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	h.Blobs.ClientPut(t, up.UploadURL, data)
	f, err := h.Svc.CompleteUpload(ctx, bob, up.FileID)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status != "active" || f.MediaType != "application/pdf" || f.FileType != "document" || f.ContentHash != sha(data) || f.Size != int64(len(data)) {
		t.Errorf("completed file = %+v", f)
	}
	writes := h.Store.Get("UpdateFile")
	again, err := h.Svc.CompleteUpload(ctx, alice, up.FileID)
	if err != nil || !cmp.Equal(again, f) || h.Store.Get("UpdateFile") != writes {
		t.Errorf("second complete = %+v, %v (writes %d → %d)", again, err, writes, h.Store.Get("UpdateFile"))
	}
	for _, id := range []string{up.FileID, unknownID, "nope"} {
		_, err := h.Svc.CompleteUpload(ctx, eve, id)
		wantErr(t, err, domain.KindNotFound, "")
	}
}

// TestUploadCompleteBeforePut: a complete before the PUT is a 409 that changes nothing while
// the URL is valid; once it has expired, the file is settled as error with its reason (and its
// collection fails), so nothing waits forever.
func TestUploadCompleteBeforePut(t *testing.T) {
	h := newTestService(t)
	c := collection(t, h, alice, "c")
	up, err := h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: "a.txt", Size: 3, CollectionID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Svc.CompleteUpload(ctx, alice, up.FileID)
	wantErr(t, err, domain.KindConflict, "", "upload the bytes with PUT to upload_url first")
	if f, _ := h.Svc.GetFile(ctx, alice, up.FileID); f.Status != "uploading" {
		t.Errorf("file after an early complete = %+v", f)
	}
	if got, _ := h.Svc.GetCollection(ctx, alice, c.ID); summary(got) != (domain.CollectionSummary{Status: "pending", Progress: 0, Files: 1, Size: 3}) {
		t.Errorf("collection while uploading = %+v", summary(got))
	}

	h.Clock.Advance(library.PresignTTL)
	_, err = h.Svc.CompleteUpload(ctx, alice, up.FileID)
	wantErr(t, err, domain.KindConflict, "", "expired")
	f, _ := h.Svc.GetFile(ctx, alice, up.FileID)
	if f.Status != "error" || !strings.Contains(f.Error, "start a new upload") {
		t.Errorf("file after expiry = %+v", f)
	}
	if got, _ := h.Svc.GetCollection(ctx, alice, c.ID); summary(got).Status != "failed" || summary(got).Progress != 100 {
		t.Errorf("collection with a failed upload = %+v", summary(got))
	}
	// Late bytes do not revive it.
	h.Blobs.ClientPut(t, up.UploadURL, []byte("abc"))
	_, err = h.Svc.CompleteUpload(ctx, alice, up.FileID)
	wantErr(t, err, domain.KindConflict, "", "expired")
}

// TestUploadCompleteSizeMismatch: an object of another size than the upload was started for is
// a 400; the object is deleted and the file stays uploading, so the right bytes complete it.
func TestUploadCompleteSizeMismatch(t *testing.T) {
	h := newTestService(t)
	up, err := h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: "a.txt", Size: 5, MediaType: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range []string{"abc", "abcdefgh"} {
		h.Blobs.ClientPut(t, up.UploadURL, []byte(data))
		_, err = h.Svc.CompleteUpload(ctx, alice, up.FileID)
		wantErr(t, err, domain.KindInvalid, "", "5 bytes")
		if keys := h.Blobs.Keys(); len(keys) != 0 {
			t.Errorf("mis-sized object kept: %v", keys)
		}
		if f, _ := h.Svc.GetFile(ctx, alice, up.FileID); f.Status != "uploading" {
			t.Errorf("file after a mis-sized PUT = %+v", f)
		}
	}
	h.Blobs.ClientPut(t, up.UploadURL, []byte("hello"))
	if f, err := h.Svc.CompleteUpload(ctx, alice, up.FileID); err != nil || f.Status != "active" || f.ContentHash != sha([]byte("hello")) {
		t.Errorf("complete with the right bytes = %+v, %v", f, err)
	}
}

// TestFileList: the company's files newest first, filtered by tag, status and file_type,
// paged, in one Store call; bad filters are 400s naming the parameter.
func TestFileList(t *testing.T) {
	h := newTestService(t)
	a := upload(t, h, alice, "a.txt", "alpha", "policy")
	b := upload(t, h, bob, "b.csv", "x,y\n1,2\n", "data", "policy")
	c := upload(t, h, alice, "c.png", string(pngHead))
	up, err := h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: "d.txt", Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	upload(t, h, eve, "e.txt", "globex", "policy")
	ids := func(list []*domain.File) []string {
		out := []string{}
		for _, f := range list {
			out = append(out, f.ID)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		f    library.FileFilter
		want []string
		more bool
	}{
		{"all", library.FileFilter{}, []string{up.FileID, c.ID, b.ID, a.ID}, false},
		{"tag", library.FileFilter{Tag: "policy"}, []string{b.ID, a.ID}, false},
		{"status", library.FileFilter{Status: "uploading"}, []string{up.FileID}, false},
		{"file_type", library.FileFilter{FileType: "data"}, []string{b.ID}, false},
		{"image", library.FileFilter{FileType: "image", Status: "active"}, []string{c.ID}, false},
		{"none archived", library.FileFilter{Status: "archived"}, []string{}, false},
		{"first page", library.FileFilter{Limit: 3}, []string{up.FileID, c.ID, b.ID}, true},
		{"second page", library.FileFilter{Offset: 3, Limit: 3}, []string{a.ID}, false},
		{"past the end", library.FileFilter{Offset: 9, Limit: 3}, []string{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h.Store.Reset()
			list, more, err := h.Svc.ListFiles(ctx, alice, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, ids(list)); d != "" || more != tt.more {
				t.Errorf("ids (-want +got):\n%s more %v, want %v", d, more, tt.more)
			}
			if h.Store.Total() != 1 {
				t.Errorf("%d Store calls, want 1", h.Store.Total())
			}
		})
	}
	_, _, err = h.Svc.ListFiles(ctx, alice, library.FileFilter{Status: "deleted"})
	wantErr(t, err, domain.KindInvalid, "status")
	_, _, err = h.Svc.ListFiles(ctx, alice, library.FileFilter{FileType: "spreadsheet"})
	wantErr(t, err, domain.KindInvalid, "file_type")
}

// TestFileTenancy: another company's file, an unknown and a malformed id are 404 on get and
// delete, and the file is untouched.
func TestFileTenancy(t *testing.T) {
	h := newTestService(t)
	f := upload(t, h, alice, "a.txt", "alpha")
	for _, id := range []string{f.ID, unknownID, "not-an-id", ""} {
		_, err := h.Svc.GetFile(ctx, eve, id)
		wantErr(t, err, domain.KindNotFound, "")
		wantErr(t, h.Svc.DeleteFile(ctx, eve, id), domain.KindNotFound, "")
	}
	if got, err := h.Svc.GetFile(ctx, alice, f.ID); err != nil || got.Status != "active" || len(h.Blobs.Keys()) != 1 {
		t.Errorf("file after foreign deletes = %+v, %v", got, err)
	}
}

// TestFileDelete: the file leaves every collection (others' files stay), its bytes and its
// record; a concurrent change of a collection is retried, not overwritten.
func TestFileDelete(t *testing.T) {
	h, hs, _ := withHooks(t)
	f := upload(t, h, alice, "a.txt", "alpha")
	keep := upload(t, h, alice, "b.txt", "beta")
	late := upload(t, h, alice, "c.txt", "gamma")
	c1, c2, c3 := collection(t, h, alice, "one"), collection(t, h, alice, "two"), collection(t, h, alice, "three")
	for _, c := range []string{c1.ID, c2.ID} {
		if _, err := h.Svc.AddFiles(ctx, alice, c, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(f.ID, keep.ID)})); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Svc.AddFiles(ctx, alice, c3.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(keep.ID)})); err != nil {
		t.Fatal(err)
	}
	// Someone adds a file to c1 between our read and our write.
	hs.beforeUpdate = func(_ int, c *domain.Collection) error {
		if c.ID == c1.ID {
			hs.beforeUpdate = nil
			if _, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(late.ID)})); err != nil {
				t.Error(err)
			}
		}
		return nil
	}
	if err := h.Svc.DeleteFile(ctx, bob, f.ID); err != nil {
		t.Fatal(err)
	}
	_, err := h.Svc.GetFile(ctx, alice, f.ID)
	wantErr(t, err, domain.KindNotFound, "")
	if keys := h.Blobs.Keys(); slices.Contains(keys, "files/acme/"+f.ID) || len(keys) != 2 {
		t.Errorf("stored keys = %v", keys)
	}
	for c, want := range map[string][]string{c1.ID: {keep.ID, late.ID}, c2.ID: {keep.ID}, c3.ID: {keep.ID}} {
		files, _, err := h.Svc.CollectionFiles(ctx, alice, c, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range files {
			got = append(got, f.ID)
		}
		if !cmp.Equal(got, want) {
			t.Errorf("collection %s holds %v, want %v", c, got, want)
		}
	}
}

// TestFileDeleteDropsFirst: a file is taken out of what is built from it (Deps.Drop) while its
// record and bytes still exist; when that fails the file stays whole and the delete says why.
func TestFileDeleteDropsFirst(t *testing.T) {
	var dropped []string
	var h *harness
	h = newTestService(t, func(d *library.Deps, _ *library.Limits) {
		d.Drop = func(ctx context.Context, f *domain.File) error {
			if _, err := h.Store.GetFile(ctx, f.ID); err != nil || !slices.Contains(h.Blobs.Keys(), f.ObjectKey) {
				t.Errorf("drop of %s after its record or bytes went: %v", f.Name, err)
			}
			dropped = append(dropped, f.Name)
			if f.Name == "held.txt" {
				return domain.Errorf(domain.KindOverloaded, "busy")
			}
			return nil
		}
	})
	gone, held := upload(t, h, alice, "gone.txt", "alpha"), upload(t, h, alice, "held.txt", "beta")
	if err := h.Svc.DeleteFile(ctx, alice, gone.ID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, h.Svc.DeleteFile(ctx, alice, held.ID), domain.KindOverloaded, "")
	if _, err := h.Svc.GetFile(ctx, alice, held.ID); err != nil || !slices.Contains(h.Blobs.Keys(), held.ObjectKey) {
		t.Errorf("the file whose drop failed: %v, keys %v", err, h.Blobs.Keys())
	}
	if !cmp.Equal(dropped, []string{"gone.txt", "held.txt"}) {
		t.Errorf("dropped %v", dropped)
	}
}

// TestFileDeleteFailure: when a step fails, the record stays (the delete can be repeated); a
// collection that keeps changing under the delete is a 409, not a lost update.
func TestFileDeleteFailure(t *testing.T) {
	h, hs, fb := withHooks(t)
	f := upload(t, h, alice, "a.txt", "alpha")
	c := collection(t, h, alice, "one")
	if _, err := h.Svc.AddFiles(ctx, alice, c.ID, input[library.FileIDsInput](map[string]any{"file_ids": anyIDs(f.ID)})); err != nil {
		t.Fatal(err)
	}

	hs.beforeUpdate = func(int, *domain.Collection) error { return domain.ErrConflict }
	wantErr(t, h.Svc.DeleteFile(ctx, alice, f.ID), domain.KindConflict, "")
	if _, err := h.Svc.GetFile(ctx, alice, f.ID); err != nil || len(h.Blobs.Keys()) != 1 {
		t.Fatalf("file after a refused delete: %v, keys %v", err, h.Blobs.Keys())
	}
	if hs.Get("UpdateCollection") < 2 {
		t.Errorf("UpdateCollection tried %d times, want retries", hs.Get("UpdateCollection"))
	}
	hs.beforeUpdate = nil

	fb.DeleteErr = domain.ErrOverloaded
	if err := h.Svc.DeleteFile(ctx, alice, f.ID); err == nil {
		t.Fatal("delete with failing S3 succeeded")
	}
	if _, err := h.Svc.GetFile(ctx, alice, f.ID); err != nil {
		t.Errorf("record gone although its bytes are not: %v", err)
	}
	fb.DeleteErr = nil
	if err := h.Svc.DeleteFile(ctx, alice, f.ID); err != nil {
		t.Fatalf("repeated delete: %v", err)
	}
	if _, err := h.Svc.GetFile(ctx, alice, f.ID); err == nil || len(h.Blobs.Keys()) != 0 {
		t.Errorf("file after the repeated delete: %v, keys %v", err, h.Blobs.Keys())
	}
}

// TestBulkFiles: one result per id in request order, failures with their reasons; each
// operation does what it says to the files that succeed and nothing to the others.
func TestBulkFiles(t *testing.T) {
	h := newTestService(t)
	a := upload(t, h, alice, "a.txt", "alpha", "old")
	b := upload(t, h, alice, "b.txt", "beta")
	foreign := upload(t, h, eve, "e.txt", "globex")
	up, err := h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: "u.txt", Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	ids := anyIDs(a.ID, unknownID, foreign.ID, "x", a.ID, b.ID, up.FileID)
	failed := []library.BulkItem{{FileID: unknownID, Status: "failed", Error: "file not found"},
		{FileID: foreign.ID, Status: "failed", Error: "file not found"}, {FileID: "x", Status: "failed", Error: "not a file id"},
		{FileID: a.ID, Status: "failed", Error: "duplicate: the id occurs earlier in this request"}}
	result := func(items ...library.BulkItem) []library.BulkItem { return items }
	ok := func(id string) library.BulkItem { return library.BulkItem{FileID: id, Status: "success"} }
	tags := func(id string) []string {
		f, err := h.Svc.GetFile(ctx, alice, id)
		if err != nil {
			t.Fatal(err)
		}
		return f.Tags
	}

	got, err := h.Svc.BulkFiles(ctx, alice, input[library.FileBulkInput](map[string]any{"operation": "update_tags", "file_ids": ids,
		"parameters": map[string]any{"tags": []any{" new ", "new", "x"}}}))
	if err != nil {
		t.Fatal(err)
	}
	want := result(append(append([]library.BulkItem{ok(a.ID)}, failed...), ok(b.ID), ok(up.FileID))...)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("update_tags (-want +got):\n%s", d)
	}
	if !cmp.Equal(tags(a.ID), []string{"new", "x"}) || !cmp.Equal(tags(up.FileID), []string{"new", "x"}) {
		t.Errorf("tags after update_tags: %v, %v", tags(a.ID), tags(up.FileID))
	}
	if f, _ := h.Svc.GetFile(ctx, eve, foreign.ID); len(f.Tags) != 0 {
		t.Errorf("foreign file's tags changed: %v", f.Tags)
	}

	got, err = h.Svc.BulkFiles(ctx, alice, input[library.FileBulkInput](map[string]any{"operation": "change_status", "file_ids": ids,
		"parameters": map[string]any{"status": "archived"}}))
	if err != nil {
		t.Fatal(err)
	}
	want = result(append(append([]library.BulkItem{ok(a.ID)}, failed...), ok(b.ID),
		library.BulkItem{FileID: up.FileID, Status: "failed", Error: "only active or archived files change status; this one is uploading"})...)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("change_status (-want +got):\n%s", d)
	}
	if l, _, _ := h.Svc.ListFiles(ctx, alice, library.FileFilter{Status: "archived"}); len(l) != 2 {
		t.Errorf("%d archived files, want 2", len(l))
	}
	got, err = h.Svc.BulkFiles(ctx, alice, input[library.FileBulkInput](map[string]any{"operation": "change_status", "file_ids": anyIDs(a.ID),
		"parameters": map[string]any{"status": "active"}}))
	if err != nil || !allDone(got) {
		t.Errorf("back to active: %+v, %v", got, err)
	}
	if f, _ := h.Svc.GetFile(ctx, alice, a.ID); f.Status != "active" {
		t.Errorf("file = %+v", f)
	}

	got, err = h.Svc.BulkFiles(ctx, alice, input[library.FileBulkInput](map[string]any{"operation": "delete", "file_ids": ids}))
	if err != nil {
		t.Fatal(err)
	}
	want = result(append(append([]library.BulkItem{ok(a.ID)}, failed...), ok(b.ID), ok(up.FileID))...)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("delete (-want +got):\n%s", d)
	}
	if l, _, _ := h.Svc.ListFiles(ctx, alice, library.FileFilter{}); len(l) != 0 {
		t.Errorf("files after delete: %+v", l)
	}
	if _, err := h.Svc.GetFile(ctx, eve, foreign.ID); err != nil {
		t.Errorf("foreign file: %v", err)
	}
}

// TestBulkFilesRejects: a malformed request is a 400 naming the field and changes nothing.
func TestBulkFilesRejects(t *testing.T) {
	h := newTestService(t)
	f := upload(t, h, alice, "a.txt", "alpha", "keep")
	many := make([]any, library.MaxRequestIDs+1)
	for i := range many {
		many[i] = f.ID
	}
	for _, tt := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"unknown operation", map[string]any{"operation": "shred", "file_ids": anyIDs(f.ID)}, "operation"},
		{"no operation", map[string]any{"file_ids": anyIDs(f.ID)}, "operation"},
		{"file_ids missing", map[string]any{"operation": "delete"}, "file_ids"},
		{"file_ids empty", map[string]any{"operation": "delete", "file_ids": []any{}}, "file_ids"},
		{"file_ids too many", map[string]any{"operation": "delete", "file_ids": many}, "file_ids"},
		{"update_tags without tags", map[string]any{"operation": "update_tags", "file_ids": anyIDs(f.ID)}, "parameters.tags"},
		{"update_tags too long", map[string]any{"operation": "update_tags", "file_ids": anyIDs(f.ID), "parameters": map[string]any{"tags": []any{strings.Repeat("t", 65)}}}, "parameters.tags"},
		{"change_status to error", map[string]any{"operation": "change_status", "file_ids": anyIDs(f.ID), "parameters": map[string]any{"status": "error"}}, "parameters.status"},
		{"change_status without status", map[string]any{"operation": "change_status", "file_ids": anyIDs(f.ID)}, "parameters.status"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Svc.BulkFiles(ctx, alice, input[library.FileBulkInput](tt.body))
			wantErr(t, err, domain.KindInvalid, tt.field)
		})
	}
	if got, err := h.Svc.GetFile(ctx, alice, f.ID); err != nil || got.Status != "active" || !cmp.Equal(got.Tags, []string{"keep"}) {
		t.Errorf("file after refused bulk requests = %+v, %v", got, err)
	}
}

// TestBulkFilesStoreCalls: the ids are loaded with one batch read (GetFiles), never a list of
// the company's files; each changed file is one conditional write.
func TestBulkFilesStoreCalls(t *testing.T) {
	h := newTestService(t)
	var ids []string
	for i := range 20 {
		ids = append(ids, upload(t, h, alice, "f"+strconv.Itoa(i)+".txt", "text "+strconv.Itoa(i)).ID)
	}
	for _, tt := range []struct {
		n                   int
		list, get, put, all int
	}{{20, 1, 0, 20, 21}, {2, 1, 0, 2, 3}} {
		h.Store.Reset()
		res, err := h.Svc.BulkFiles(ctx, alice, input[library.FileBulkInput](map[string]any{"operation": "update_tags", "file_ids": anyIDs(ids[:tt.n]...),
			"parameters": map[string]any{"tags": []any{"round" + strconv.Itoa(tt.n)}}}))
		if ok, _ := tally(res); err != nil || !allDone(res) || ok != tt.n {
			t.Fatalf("bulk = %+v, %v", res, err)
		}
		if h.Store.Get("GetFiles") != tt.list || h.Store.Get("GetFile") != tt.get || h.Store.Get("UpdateFile") != tt.put || h.Store.Total() != tt.all {
			t.Errorf("%d ids: GetFiles %d GetFile %d UpdateFile %d total %d, want %d %d %d %d", tt.n, h.Store.Get("GetFiles"),
				h.Store.Get("GetFile"), h.Store.Get("UpdateFile"), h.Store.Total(), tt.list, tt.get, tt.put, tt.all)
		}
	}
}
