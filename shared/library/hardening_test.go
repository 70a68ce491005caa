package library_test

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
	"github.com/agentorch/agentorch/shared/library/librarytest"
)

// TestCompleteRefusesUnsignedHeaders: an object of another Content-Type than signed (which real
// S3 refuses at the PUT) is refused by complete as one of another size is: 400, deleted, and the
// file still uploading so the client may PUT again.
func TestCompleteRefusesUnsignedHeaders(t *testing.T) {
	h := newTestService(t)
	data := []byte("plain words")
	up, err := h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: "a.txt", Size: int64(len(data)), MediaType: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	h.Blobs.ClientPutAs(t, up.UploadURL, data, "text/html")
	_, err = h.Svc.CompleteUpload(ctx, alice, up.FileID)
	wantErr(t, err, domain.KindInvalid, "", "Content-Type")
	if len(h.Blobs.Keys()) != 0 {
		t.Errorf("a refused object stays: %v", h.Blobs.Keys())
	}
	h.Blobs.ClientPut(t, up.UploadURL, data)
	if f, err := h.Svc.CompleteUpload(ctx, alice, up.FileID); err != nil || f.Status != "active" {
		t.Errorf("complete after a proper PUT = %+v, %v", f, err)
	}
}

// swapBlobs replaces an object's bytes right after Open, as a PUT racing a complete would.
type swapBlobs struct {
	*librarytest.MemBlobs
	t testing.TB
}

func (b *swapBlobs) Open(ctx context.Context, key string) (io.ReadCloser, domain.Object, error) {
	r, o, err := b.MemBlobs.Open(ctx, key)
	if err == nil {
		b.MemBlobs.ClientPut(b.t, "mem://"+key+"?type="+o.ContentType, []byte(strings.Repeat("x", int(o.Size))))
	}
	return r, o, err
}

// TestCompleteStreamsAndPinsBytes: complete reads the object once as a stream (never Get, which
// holds it whole) and copies it only if its bytes are still the ones it hashed: bytes replaced
// meanwhile are a 409 that leaves the file uploading and nothing at the file's key.
func TestCompleteStreamsAndPinsBytes(t *testing.T) {
	var sb *swapBlobs
	h := newTestService(t, func(d *library.Deps, _ *library.Limits) {
		sb = &swapBlobs{MemBlobs: d.Blobs.(*librarytest.MemBlobs), t: t}
		d.Blobs = sb
	})
	data := []byte("first version of the bytes")
	up, err := h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: "a.txt", Size: int64(len(data)), MediaType: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	h.Blobs.ClientPut(t, up.UploadURL, data)
	_, err = h.Svc.CompleteUpload(ctx, alice, up.FileID)
	wantErr(t, err, domain.KindConflict, "", "replaced")
	if f, _ := h.Svc.GetFile(ctx, alice, up.FileID); f.Status != "uploading" {
		t.Errorf("file after a raced complete: %s, want uploading", f.Status)
	}
	if keys := h.Blobs.Keys(); len(keys) != 1 || !strings.HasPrefix(keys[0], "uploads/") {
		t.Errorf("objects after a raced complete: %v, want only the staged one", keys)
	}
	if h.Blobs.Counts.Get("Get") != 0 || h.Blobs.Counts.Get("Open") != 1 {
		t.Errorf("complete read with Get %d, Open %d; want a stream (Open 1, Get 0)", h.Blobs.Counts.Get("Get"), h.Blobs.Counts.Get("Open"))
	}
}

// TestTagChangeRacingDelete: a bulk change of a file deleted after it was read fails for that
// file and does not bring the record back.
func TestTagChangeRacingDelete(t *testing.T) {
	h := newTestService(t)
	f := upload(t, h, alice, "a.txt", "text")
	rec, err := h.Store.GetFile(ctx, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Svc.DeleteFile(ctx, alice, f.ID); err != nil {
		t.Fatal(err)
	}
	rec.Tags = []string{"late"}
	if err := h.Store.UpdateFile(ctx, rec, rec.UpdatedAt); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("update of a deleted file: %v, want not found", err)
	}
	if _, err := h.Store.GetFile(ctx, f.ID); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("the deleted file came back: %v", err)
	}
}

// TestNamesRefuseFormatCharacters: file names and tags with format characters (bidirectional
// overrides, zero-width characters) are refused as control characters are.
func TestNamesRefuseFormatCharacters(t *testing.T) {
	h := newTestService(t)
	for _, name := range []string{"\u202etxt.exe", "invoice\u200b.pdf", "a\u2066b.txt", "\ufeffx.txt"} {
		_, err := h.Svc.Upload(ctx, alice, library.Upload{Name: name, Data: []byte("x")})
		wantErr(t, err, domain.KindInvalid, "file", "format characters")
		_, err = h.Svc.StartUpload(ctx, alice, library.StartUpload{Name: name, Size: 1})
		wantErr(t, err, domain.KindInvalid, "name")
	}
	_, err := h.Svc.Upload(ctx, alice, library.Upload{Name: "a.txt", Data: []byte("x"), Tags: []string{"ok", "bad\u202e"}})
	wantErr(t, err, domain.KindInvalid, "tags")
	if f, err := h.Svc.Upload(ctx, alice, library.Upload{Name: "résumé – 2026 (中文).txt", Data: []byte("x")}); err != nil || f.Name != "résumé – 2026 (中文).txt" {
		t.Errorf("a name with accents, a dash and CJK = %+v, %v", f, err)
	}
}

// TestBulkRefusesUnknownFields: a parameter a file bulk request's operation does not take is a
// 400 naming it, never silently ignored, and changes nothing. (Keys no request has are refused
// by the edge's decoder: api TestDecodeGolden.)
func TestBulkRefusesUnknownFields(t *testing.T) {
	h := newTestService(t)
	f := upload(t, h, alice, "a.txt", "text", "keep")
	c := collection(t, h, alice, "c")
	for _, tt := range []struct {
		name  string
		run   func() error
		field string
	}{
		{"delete with tags", func() error {
			_, err := h.Svc.BulkFiles(ctx, alice, input[library.FileBulkInput](map[string]any{"operation": "delete", "file_ids": anyIDs(f.ID), "parameters": map[string]any{"tags": []any{"a"}}}))
			return err
		}, "parameters.tags"},
		{"update_tags with a status", func() error {
			_, err := h.Svc.BulkFiles(ctx, alice, input[library.FileBulkInput](map[string]any{"operation": "update_tags", "file_ids": anyIDs(f.ID), "parameters": map[string]any{"tags": []any{"a"}, "status": nil}}))
			return err
		}, "parameters.status"},
		{"change_status with another parameter", func() error {
			_, err := h.Svc.BulkFiles(ctx, alice, input[library.FileBulkInput](map[string]any{"operation": "change_status", "file_ids": anyIDs(f.ID), "parameters": map[string]any{"status": "archived", "tags": []any{}}}))
			return err
		}, "parameters.tags"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantErr(t, tt.run(), domain.KindInvalid, tt.field, "unknown field")
		})
	}
	if got, err := h.Svc.GetFile(ctx, alice, f.ID); err != nil || got.Status != "active" || len(got.Tags) != 1 {
		t.Errorf("file after refused requests = %+v, %v", got, err)
	}
	if files, _, _ := h.Svc.CollectionFiles(ctx, alice, c.ID, 0, 0); len(files) != 0 {
		t.Errorf("collection after refused requests holds %d files", len(files))
	}
}

// TestListsReadThePage: a list page reads about the page's records whatever the company's size,
// and paging through keeps order, limit and more exact.
func TestListsReadThePage(t *testing.T) {
	h := newTestService(t)
	var ids []string
	for i := range 60 {
		ids = append([]string{upload(t, h, alice, "f"+strconv.Itoa(i)+".txt", "x").ID}, ids...)
		h.Clock.Advance(1)
	}
	h.Store.Read()
	var got []string
	for offset := 0; ; offset += 7 {
		list, more, err := h.Svc.ListFiles(ctx, alice, library.FileFilter{Offset: offset, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		if read := h.Store.Read(); read > offset+7+1 {
			t.Errorf("page at offset %d read %d records, want at most %d", offset, read, offset+8)
		}
		for _, f := range list {
			got = append(got, f.ID)
		}
		if !more {
			break
		}
	}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Errorf("paged listing differs from the files newest first")
	}
	h.Store.Read()
	if list, more, err := h.Svc.ListFiles(ctx, alice, library.FileFilter{Limit: 5}); err != nil || len(list) != 5 || !more {
		t.Errorf("first page = %d, %v, %v", len(list), more, err)
	}
	if read := h.Store.Read(); read != 6 {
		t.Errorf("first page of 5 read %d records of 60, want 6", read)
	}
}
