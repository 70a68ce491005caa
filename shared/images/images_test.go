package images

import (
	"context"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
)

type memBlobs map[string][]byte

func (m memBlobs) Put(_ context.Context, key string, data []byte, _ string) error {
	m[key] = data
	return nil
}

func (m memBlobs) Get(_ context.Context, key string, _ int64) ([]byte, string, error) {
	d, ok := m[key]
	if !ok {
		return nil, "", domain.ErrNotFound
	}
	return d, "image/gif", nil
}

func TestUploadOpen(t *testing.T) {
	svc := New(memBlobs{})
	gif := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
	up, err := svc.Upload(context.Background(), gif)
	if err != nil || !strings.HasSuffix(up.Name, ".gif") || up.MediaType != "image/gif" || up.Size != len(gif) {
		t.Fatalf("upload = %+v %v", up, err)
	}
	if name, ok := MediaName("/media/" + up.Name); !ok || name != up.Name {
		t.Errorf("MediaName = %q %v", name, ok)
	}
	if _, _, err := svc.Open(context.Background(), up.Name); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"../x.gif", up.Name + "x", "ABC.gif"} {
		if _, _, err := svc.Open(context.Background(), bad); domain.KindOf(err) != domain.KindNotFound {
			t.Errorf("open %q: %v", bad, err)
		}
	}
	if _, err := svc.Upload(context.Background(), []byte("<html>not an image</html>")); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("html upload: %v", err)
	}
	if _, err := svc.Upload(context.Background(), make([]byte, MaxBytes+1)); domain.KindOf(err) != domain.KindTooLarge {
		t.Errorf("large upload: %v", err)
	}
}

func TestSniff(t *testing.T) {
	for data, want := range map[string]string{
		"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR": "image/png",
		"\xff\xd8\xff\xe0\x00\x10JFIF\x00":    "image/jpeg",
		"GIF89a\x01\x00\x01\x00\x00\x00\x00;": "image/gif",
		"RIFF\x00\x00\x00\x00WEBPVP8 ":        "image/webp",
	} {
		if got, ok := Sniff([]byte(data)); !ok || got != want {
			t.Errorf("Sniff(%q) = %q %v, want %q", data, got, ok, want)
		}
	}
	for _, data := range []string{"MZ\x90\x00\x03\x00\x00\x00\x04\x00", "%PDF-1.4", "<html></html>", ""} {
		if got, ok := Sniff([]byte(data)); ok {
			t.Errorf("Sniff(%q) = %q, accepted", data, got)
		}
	}
}
