package api_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// BenchmarkExecuteImageBody reads an execute body with a 3 MB image (a data URL) and a text
// block through the real handler and the sessions feature, up to the first store call: what
// the edge and the content's parse cost before a run.
func BenchmarkExecuteImageBody(b *testing.B) {
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, image.NewRGBA(image.Rect(0, 0, 1, 1))); err != nil {
		b.Fatal(err)
	}
	data := append(pngBuf.Bytes(), make([]byte, 3_000_000)...)
	body := `{"content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(data) +
		`"}},{"type":"text","text":"what is in it?"}],"correlation_id":"c1"}`
	p := domain.Principal{KeyID: "k1", Owner: "o1", Company: "c1"}
	h := api.NewRuntime(executing{sessions.New(sessions.Deps{}, sessions.Limits{})}, api.Options{Auth: openapiAuth{p: p}})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/api/v1/runtime/"+goldenSession+"/execute/", strings.NewReader(body))
		r.Header.Set("X-API-Key", "k")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusConflict {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
