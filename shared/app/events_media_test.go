package app_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// mediaName is the name of an uploaded image in its /media/ URL.
var mediaName = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.(png|jpg|gif|webp)$`)

// upload stores the upload event's image by replaying the event and returns the name its URL
// gives it under /media/. The URL's base is PUBLIC_BASE_URL, or without it the API Gateway
// stage of the event's request context (never its Host header).
func (r *replayer) upload(t *testing.T, secret string) string {
	t.Helper()
	var out struct {
		URL       string `json:"url"`
		MediaType string `json:"media_type"`
		Size      int    `json:"size"`
	}
	r.replayJSON(t, "images-upload.json", map[string]string{placeholderKey: secret}, http.StatusCreated, &out)
	img := uploadEventImage(t, r.root)
	if out.MediaType != "image/png" || out.Size != len(img) {
		t.Errorf("upload result media_type %q size %d, want image/png %d", out.MediaType, out.Size, len(img))
	}
	base := strings.TrimSuffix(r.app.Config.PublicBaseURL, "/")
	if base == "" {
		base = "https://" + uploadEvent(t, r.root).RequestContext.DomainName
	}
	name, ok := strings.CutPrefix(out.URL, base+"/media/")
	if !ok || !mediaName.MatchString(name) {
		t.Fatalf("upload result url %q, want %s/media/<uuid>.png", out.URL, base)
	}
	return name
}

// uploadEvent reads events/images-upload.json.
func uploadEvent(t *testing.T, root string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "events", "images-upload.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// uploadEventImage is the file the upload event carries: its body is base64 multipart/form-data
// with the boundary of its Content-Type, and the image is the part named "image".
func uploadEventImage(t *testing.T, root string) []byte {
	t.Helper()
	ev := uploadEvent(t, root)
	body, err := base64.StdEncoding.DecodeString(ev.Body)
	if err != nil || !ev.IsBase64Encoded {
		t.Fatalf("upload event: body not base64 (isBase64Encoded %v): %v", ev.IsBase64Encoded, err)
	}
	mt, params, err := mime.ParseMediaType(ev.Headers["content-type"])
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		t.Fatalf("upload event: content-type %q is not multipart/form-data with a boundary: %v", ev.Headers["content-type"], err)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			t.Fatal("upload event: no part named image")
		}
		if err != nil {
			t.Fatalf("upload event: %v", err)
		}
		if part.FormName() != "image" {
			continue
		}
		img, err := io.ReadAll(part)
		if err != nil {
			t.Fatalf("upload event: %v", err)
		}
		if got := http.DetectContentType(img); got != "image/png" {
			t.Fatalf("upload event: the image part is %s, want a PNG", got)
		}
		return img
	}
}

// checkMedia checks the media read's response: the uploaded bytes with their type, cached only
// privately and never sniffed as another type.
func checkMedia(t *testing.T, header http.Header, body, want []byte) {
	t.Helper()
	if ct := header.Get("Content-Type"); ct != "image/png" {
		t.Errorf("Content-Type %q, want image/png", ct)
	}
	if !bytes.Equal(body, want) {
		t.Errorf("body is %d bytes (%q…), want the %d uploaded bytes", len(body), body[:min(len(body), 16)], len(want))
	}
	if got := header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", got)
	}
	if got := header.Get("Cache-Control"); got != "private, max-age=3600" {
		t.Errorf("Cache-Control %q, want private, max-age=3600", got)
	}
}
