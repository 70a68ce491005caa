package api_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
)

// TestFeedbackRatingAndCommentOptional: the contract makes both optional. Feedback with neither
// records that the user saw the message; given again it keeps what was rated.
func TestFeedbackRatingAndCommentOptional(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	msgID := s.execute(key, sid, `{"content":"seen"}`)["messages"].([]any)[0].(map[string]any)["id"].(string)
	feedback := func(body string) map[string]any {
		t.Helper()
		res := s.do(req{method: "POST", path: "/api/v1/sessions/feedback/", key: key, body: body})
		if res.status != 200 {
			t.Fatalf("feedback %s: %d %s", body, res.status, res.body)
		}
		return res.json(t)
	}
	seen := feedback(`{"message":"` + msgID + `"}`)
	if seen["rating"] != nil || seen["comment"] != nil || seen["message"] != msgID {
		t.Errorf("feedback with neither = %v", seen)
	}
	rated := feedback(`{"message":"` + msgID + `","rating":-1,"comment":null}`)
	again := feedback(`{"message":"` + msgID + `"}`)
	if rated["id"] != seen["id"] || rated["rating"] != float64(-1) || again["id"] != seen["id"] || again["rating"] != float64(-1) || again["comment"] != nil {
		t.Errorf("seen %v, rated %v, seen again %v", seen, rated, again)
	}
}

// TestExecuteMessageShapeCorrelationID: the message shape's correlation_id is a string, as in
// the contract: the request's, or empty when none was sent (never null).
func TestExecuteMessageShapeCorrelationID(t *testing.T) {
	s, _ := newFakeStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	for body, want := range map[string]string{`{"content":"hi"}`: "", `{"content":"hi","correlation_id":"ticket-9"}`: "ticket-9"} {
		res := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/?format=message", key: key, body: body})
		if res.status != 200 {
			t.Fatalf("execute %s: %d %s", body, res.status, res.body)
		}
		if got, ok := res.json(t)["correlation_id"].(string); !ok || got != want {
			t.Errorf("%s: correlation_id = %#v, want %q", body, res.json(t)["correlation_id"], want)
		}
	}
}

// TestImageUploadURLIgnoresHost: the upload URL is built on the configured base (locally the dev
// server's address), whatever Host or X-Forwarded-* headers the client sends.
func TestImageUploadURLIgnoresHost(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	want := s.app.Config.PublicBaseURL + "/media/"
	if s.app.Config.PublicBaseURL == "" {
		t.Fatal("no PUBLIC_BASE_URL default for local runs")
	}
	ct, body := multipartBody(t, "image", pngBytes(t))
	r := httptest.NewRequest(http.MethodPost, "http://evil.example/api/v1/images/upload/", bytes.NewReader(body))
	r.Host = "evil.example"
	r.Header.Set("Content-Type", ct)
	r.Header.Set("x-api-key", key)
	r.Header.Set("X-Forwarded-Proto", "https")
	r.Header.Set("X-Forwarded-Host", "evil.example")
	w := httptest.NewRecorder()
	s.mux.ServeHTTP(w, r)
	var out struct{ URL string }
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || w.Code != http.StatusCreated || !strings.HasPrefix(out.URL, want) {
		t.Errorf("upload with Host evil.example: %d %s, want a url under %s", w.Code, w.Body, want)
	}
}

// TestImageUploadWithoutBase: a deployment that knows no public base answers 500 in the
// envelope (its configuration is wrong) and stores nothing, rather than trusting Host.
func TestImageUploadWithoutBase(t *testing.T) {
	h := api.NewImages(nil, func(*http.Request) string { return "" }, api.Options{Auth: openapiAuth{p: domain.Principal{KeyID: "k1", Owner: "o1", Company: "c1", ExpiresAt: time.Now().Add(time.Hour)}}})
	ct, body := multipartBody(t, "image", pngBytes(t))
	r := httptest.NewRequest(http.MethodPost, "/api/v1/images/upload/", bytes.NewReader(body))
	r.Header.Set("Content-Type", ct)
	r.Header.Set("x-api-key", "ak_x")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r) // a nil service would panic if the upload went on to store the image
	b, _ := io.ReadAll(w.Body)
	if w.Code != http.StatusInternalServerError || !strings.Contains(string(b), `"api_error"`) || strings.Contains(string(b), "PUBLIC_BASE_URL") {
		t.Errorf("upload without a base: %d %s", w.Code, b)
	}
}

// TestDataURLContradictedByItsBytes: an executable declared as image/png or application/pdf is a
// 400 naming the block, as the upload endpoint refuses it.
func TestDataURLContradictedByItsBytes(t *testing.T) {
	s := newStack(t)
	key := s.key("alice", "acme")
	sid := s.session(key, flatSession)
	exe := base64.StdEncoding.EncodeToString(append([]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff"), make([]byte, 64)...))
	for body, field := range map[string]string{
		`{"content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + exe + `"}}]}`:                       "content.0.image_url.url",
		`{"content":[{"type":"text","text":"read"},{"type":"file","file_url":"data:application/pdf;base64,` + exe + `"}]}`: "content.1.file_url",
	} {
		res := s.do(req{method: "POST", path: "/api/v1/runtime/" + sid + "/execute/", key: key, body: body})
		if res.status != 400 || !strings.Contains(string(res.body), field) || !strings.Contains(string(res.body), "executable") {
			t.Errorf("%s: %d %s", field, res.status, res.body)
		}
	}
	png := base64.StdEncoding.EncodeToString(pngBytes(t))
	s.execute(key, sid, `{"content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,`+png+`"}}]}`)
}
