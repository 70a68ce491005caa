package api

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckJSONText: what checkJSONText lets through decodes without a NUL and without a U+FFFD
// that encoding/json made up, and clean text always passes.
func FuzzCheckJSONText(f *testing.F) {
	for _, s := range []string{`{"a":"\ud800"}`, `{"a":["x","\u0000"]}`, `{"\ud83d\ude00":[1,{"b":"\udc00"}]}`,
		"{\"a\":\"\xff\"}", `{"a":"\\u0000"}`, `[{"a":[[],{}]},"\ud83d\ude00"]`, `{"a":"\ud83d\u0041"}`, `{"a":"\ufffd"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		err := checkJSONText(b)
		if err != nil {
			if utf8.Valid(b) && !bytes.Contains(b, []byte(`\u`)) {
				t.Fatalf("refused clean text %q: %v", b, err)
			}
			return
		}
		var v any
		if json.Unmarshal(b, &v) != nil {
			return
		}
		honest := bytes.Contains(b, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(b), []byte(`\ufffd`))
		var walk func(any)
		check := func(s string) {
			if strings.IndexByte(s, 0) >= 0 {
				t.Fatalf("NUL let through in %q", b)
			}
			if strings.ContainsRune(s, utf8.RuneError) && !honest {
				t.Fatalf("a replaced character let through in %q", b)
			}
		}
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				check(x)
			case map[string]any:
				for k, e := range x {
					check(k)
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(v)
	})
}
