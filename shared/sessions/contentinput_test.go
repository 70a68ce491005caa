package sessions

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
)

// TestQueuedContentOfBefore: a queued execution's content as the code before typed content
// stored it (the body's own JSON value, keys sorted, read back with numbers kept) still runs,
// and typed content is stored as the same JSON value (keys aside).
func TestQueuedContentOfBefore(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	for _, tc := range []struct {
		name, stored string
		want         []domain.Part
		userText     string
	}{
		{"text", `{"content":"hello {{ variables.x }}","inputs":{"x":"world"}}`,
			[]domain.Part{{Type: domain.PartText, Text: "hello {{ variables.x }}"}}, "hello {{ variables.x }}"},
		{"blocks", `{"content":[{"text":"what is it?","type":"text"},{"image_url":{"detail":1.50,"url":"` + url + `"},"type":"image_url"},` +
			`{"file_url":"data:text/plain;base64,aGk=","type":"file"}]}`,
			[]domain.Part{{Type: domain.PartText, Text: "what is it?"}, {Type: domain.PartImage, Image: &domain.Media{Format: "png", Data: buf.Bytes()}},
				{Type: domain.PartDocument, Document: &domain.Media{Format: "txt", Name: "document-txt", Data: []byte("hi")}}},
			"what is it?\n[image]\n[file: document-txt]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var req map[string]any
			dec := json.NewDecoder(bytes.NewReader([]byte(tc.stored)))
			dec.UseNumber() // as the DynamoDB adapter reads its data attribute
			if err := dec.Decode(&req); err != nil {
				t.Fatal(err)
			}
			c := queuedContent(&domain.Execution{Request: req})
			parts, text, err := (&Service{}).parseContent(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, parts); d != "" || text != tc.userText {
				t.Errorf("parts (-want +got):\n%s\ntext %q, want %q", d, text, tc.userText)
			}
			// Stored again, it is the same JSON value.
			again, err := json.Marshal(map[string]any{"content": c})
			if err != nil {
				t.Fatal(err)
			}
			var was, now any
			_ = json.Unmarshal([]byte(tc.stored), &was)
			if err := json.Unmarshal(again, &now); err != nil {
				t.Fatal(err)
			}
			delete(was.(map[string]any), "inputs")
			if d := cmp.Diff(was, now); d != "" {
				t.Errorf("stored again (-was +now):\n%s", d)
			}
		})
	}
	// A queued request is measured as before: without HTML escaping, whatever the characters.
	if got, want := jsonSize(map[string]any{"content": TextContent("<&> é")}), jsonSize(map[string]any{"content": "<&> é"}); got != want {
		t.Errorf("typed content measures %d bytes, the body's value %d", got, want)
	}
	// What does not read as content is refused when it runs, as before.
	for _, stored := range []any{map[string]any{"not": "a message"}, []any{5}, nil} {
		c := queuedContent(&domain.Execution{Request: map[string]any{"content": stored}})
		if _, _, err := (&Service{}).parseContent(context.Background(), c); domain.KindOf(err) != domain.KindInvalid {
			t.Errorf("%v: %v, want invalid", stored, err)
		}
	}
}
