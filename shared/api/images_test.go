package api_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
)

func pngBytes(t testing.TB) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// multipartBody builds a form with one file part.
func multipartBody(t testing.TB, field string, data []byte) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	fw, err := w.CreateFormFile(field, "pic.png")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = w.Close()
	return w.FormDataContentType(), b.Bytes()
}

func TestImageUploadAndUse(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	img := pngBytes(t)
	ct, body := multipartBody(t, "image", img)
	res := s.do(req{method: "POST", path: "/api/v1/images/upload/", key: key, body: body, header: map[string]string{"Content-Type": ct}})
	if res.status != 201 {
		t.Fatalf("upload: %d %s", res.status, res.body)
	}
	up := res.json(t)
	u, err := url.Parse(up["url"].(string))
	if err != nil || !strings.HasPrefix(u.Path, "/media/") || !strings.HasSuffix(u.Path, ".png") || up["media_type"] != "image/png" || up["size"] != float64(len(img)) {
		t.Fatalf("upload result = %s", res.body)
	}
	got := s.do(req{method: "GET", path: u.Path})
	if got.status != 200 || got.header.Get("Content-Type") != "image/png" || !bytes.Equal(got.body, img) {
		t.Errorf("media: %d %q, %d bytes", got.status, got.header.Get("Content-Type"), len(got.body))
	}
	// The uploaded URL works in an image_url block: read from storage, not fetched.
	sid := s.session(key, flatSession)
	out := s.execute(key, sid, `{"content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"`+up["url"].(string)+`"}}]}`)
	if r := reply(t, out); !strings.Contains(r, "what is this?") || !strings.Contains(r, "image") {
		t.Errorf("reply with an uploaded image = %q", r)
	}
	// A data URL works too; an unknown upload is a 400 naming the field.
	data := "data:image/png;base64," + base64.StdEncoding.EncodeToString(img)
	s.execute(key, sid, `{"content":[{"type":"image_url","image_url":{"url":"`+data+`"}}]}`)
	gone := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key,
		body: `{"content":[{"type":"image_url","image_url":{"url":"http://127.0.0.1:3000/media/3f1c2d4e-0000-4000-8000-000000000000.png"}}]}`})
	if gone.status != 400 || !strings.Contains(string(gone.body), "content.0.image_url.url") {
		t.Errorf("unknown upload: %d %s", gone.status, gone.body)
	}
}

func TestImageUploadBadInput(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	textCT, textBody := multipartBody(t, "image", []byte("just some text, not an image"))
	otherCT, otherBody := multipartBody(t, "picture", pngBytes(t))
	bigCT, bigBody := multipartBody(t, "image", append(pngBytes(t), make([]byte, 3_800_000)...))
	emptyCT, emptyBody := multipartBody(t, "image", nil)
	tests := []struct {
		name, ct string
		body     []byte
		status   int
	}{
		{"not multipart", "application/json", []byte(`{"image":"x"}`), 400},
		{"no image part", otherCT, otherBody, 400},
		{"not an image", textCT, textBody, 400},
		{"empty image", emptyCT, emptyBody, 400},
		{"too large", bigCT, bigBody, 413},
		{"broken multipart", "multipart/form-data; boundary=zzz", []byte("--zzz\r\nnope"), 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.do(req{method: "POST", path: "/api/v1/images/upload/", key: key, body: tt.body, header: map[string]string{"Content-Type": tt.ct}})
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %s", res.status, tt.status, res.body)
			}
			res.errorType(t)
		})
	}
	if r := s.do(req{method: "POST", path: "/api/v1/images/upload/", body: otherBody, header: map[string]string{"Content-Type": otherCT}}); r.status != 401 {
		t.Errorf("upload without a key: %d", r.status)
	}
	for _, p := range []string{"/media/nope.png", "/media/3f1c2d4e-0000-4000-8000-000000000000.png", "/media/..%2fsecret"} {
		if r := s.do(req{method: "GET", path: p}); r.status != 404 {
			t.Errorf("GET %s: %d", p, r.status)
		}
	}
}

// TestImageHandlers: an upload answers its URL on the configured base (a trailing slash there
// is not doubled) and the media route serves it with headers that keep browsers from guessing,
// over a fake image store.
func TestImageHandlers(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	img := pngBytes(t)
	ct, body := multipartBody(t, "image", img)
	res := s.do(req{method: "POST", path: "/api/v1/images/upload/", key: key, body: body, header: map[string]string{"Content-Type": ct}})
	up := res.json(t)
	u, _ := up["url"].(string)
	if res.status != 201 || !strings.HasPrefix(u, fakeBaseURL+"/media/") || up["media_type"] != "image/png" || up["size"] != float64(len(img)) {
		t.Fatalf("upload: %d %s", res.status, res.body)
	}
	got := s.do(req{method: "GET", path: strings.TrimPrefix(u, fakeBaseURL)})
	for h, want := range map[string]string{"Content-Type": "image/png", "Content-Length": strconv.Itoa(len(img)),
		"Cache-Control": "private, max-age=3600", "X-Content-Type-Options": "nosniff"} {
		if got.header.Get(h) != want {
			t.Errorf("media %s = %q, want %q", h, got.header.Get(h), want)
		}
	}
	if got.status != 200 || !bytes.Equal(got.body, img) {
		t.Errorf("media: %d, %d bytes", got.status, len(got.body))
	}
	reader := s.key("alice", "acme", func(k *auth.NewKey) { k.Scopes = []string{domain.ScopeSessionRead} })
	wantStatus(t, "upload with sessions:read", s.do(req{method: "POST", path: "/api/v1/images/upload/", key: reader, body: body, header: map[string]string{"Content-Type": ct}}),
		403, "permission_error", domain.MsgNoPermission)
}
