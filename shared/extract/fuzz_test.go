package extract

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

var fuzzNames = []string{"f.txt", "f.md", "f.html", "f.csv", "f.tsv", "f.json", "f.jsonl", "f.pdf", "f.docx", "f"}

// FuzzText checks that Text never panics or hangs, whatever the bytes and the extension, and that
// it either fails with a domain error or returns normalised text with words in it.
func FuzzText(f *testing.F) {
	seeds := [][]byte{
		buildPDF(&pdfBuilder{}, "", textContent),
		docx(f, `<w:p><w:r><w:t>Hello</w:t><w:tab/><w:t>there</w:t></w:r></w:p>`),
		[]byte("<html><body><p>Hi &amp; bye</p><script>x</script><table><tr><td>a</td></tr></table></body></html>"),
		[]byte("a,b\n1,\"2\"\n"),
		[]byte(`{"a":[1,{"b":null}],"c":"d"}`),
		[]byte("{\"a\":1}\n{\"b\":2}\n"),
		[]byte("plain\r\ntext\x00"),
		utf16Bytes("wide text", false),
		minimalExe,
	}
	if pdf, err := os.ReadFile("testdata/shared-mime-info/spec.pdf"); err == nil {
		seeds = append(seeds, pdf[:4096], pdf[len(pdf)-4096:])
	}
	for _, s := range seeds {
		for i := range fuzzNames {
			f.Add(s, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		name := fuzzNames[int(which)%len(fuzzNames)]
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := Text(ctx, name, data, Limits{MaxBytes: 1 << 20, MaxPages: 100, MaxText: 1 << 20})
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) {
				t.Fatalf("%s: error %v (%T) is not a domain error", name, err, err)
			}
			if de.Message == "" || strings.Contains(strings.ToLower(de.Message), "eof") {
				t.Fatalf("%s: unhelpful message %q", name, de.Message)
			}
			return
		}
		checkNormalised(t, res.Text)
	})
}

func checkNormalised(t *testing.T, s string) {
	t.Helper()
	switch {
	case !hasWords(s):
		t.Fatalf("success without words: %q", s)
	case !utf8.ValidString(s):
		t.Fatalf("invalid UTF-8: %q", s)
	case strings.ContainsAny(s, "\r\x00\ufeff"):
		t.Fatalf("CR, NUL or BOM left: %q", s)
	case strings.Contains(s, "\n\n\n"):
		t.Fatalf("more than one blank line: %q", s)
	case strings.Contains(s, " \n") || strings.Contains(s, "\t\n") || strings.HasSuffix(s, " "):
		t.Fatalf("trailing blanks: %q", s)
	case strings.HasPrefix(s, "\n") || strings.HasSuffix(s, "\n"):
		t.Fatalf("blank lines at the ends: %q", s)
	}
}
