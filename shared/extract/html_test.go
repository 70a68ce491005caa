package extract

import (
	"context"
	"strings"
	"testing"
)

func TestHTMLVisibleText(t *testing.T) {
	page := `<!DOCTYPE html>
<html><head><title>Tab title</title><meta name="description" content="meta text">
<style>body { color: red }</style><script>var hidden = "script text";</script></head>
<body>
<nav>Home | About</nav>
<h1>Caf&eacute; &amp; Bar</h1>
<p>First   paragraph
   spans lines.<br>After a break.</p>
<p>Line one<br><br>New paragraph by two breaks.</p>
<noscript>Enable JavaScript</noscript><template><p>template text</p></template>
<div hidden>hidden attribute</div><div style="display: none">display none</div>
<ul><li>apples</li><li><p>pears</p></li></ul>
<ol start="3"><li>third</li><li>fourth</li></ol>
<table><tr><th>Name</th><th>Qty</th></tr><tr><td>Widget</td><td>4</td></tr></table>
<pre>  keep
    this</pre>
<p>Inline <b>bold</b><i>italic</i> and <a href="/x">a link</a>.</p>
<!-- a comment -->
<svg><text>svg label</text></svg>
</body></html>`
	res, err := Text(context.Background(), "page.html", []byte(page), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := "Home | About\n\n" +
		"Café & Bar\n\n" +
		"First paragraph spans lines.\nAfter a break.\n\n" +
		"Line one\n\nNew paragraph by two breaks.\n\n" +
		"- apples\n- pears\n\n" +
		"3. third\n4. fourth\n\n" +
		"Name | Qty\nWidget | 4\n\n" +
		"  keep\n    this\n\n" +
		"Inline bolditalic and a link."
	if res.Text != want {
		t.Errorf("text =\n%q\nwant\n%q", res.Text, want)
	}
	for _, gone := range []string{"Tab title", "meta text", "color", "script text", "Enable JavaScript", "template text", "hidden attribute", "display none", "svg label", "comment"} {
		if strings.Contains(res.Text, gone) {
			t.Errorf("text contains %q", gone)
		}
	}
	if res.MediaType != MediaHTML || res.FileType != FileDocument {
		t.Errorf("media, file type = %s, %s", res.MediaType, res.FileType)
	}
}

func TestHTMLEncodings(t *testing.T) {
	tests := []struct {
		name, file string
		data       []byte
		want       string
	}{
		// ASCII for the first 1024 bytes, UTF-8 later: the standard's prescan alone would say
		// windows-1252 and turn "é" into "Ã©".
		{"late utf-8", "a.html", []byte("<p>" + strings.Repeat("x ", 600) + "</p><p>café</p>"), "café"},
		{"meta latin-1", "b.html", []byte("<meta charset=\"iso-8859-1\"><p>caf\xe9</p>"), "café"},
		{"undeclared windows-1252", "c.html", []byte("<p>\x93quoted\x94 caf\xe9</p>"), "\u201cquoted\u201d café"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Text(context.Background(), tt.file, tt.data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(res.Text, tt.want) {
				t.Errorf("text ends %q, want %q", res.Text[max(0, len(res.Text)-30):], tt.want)
			}
		})
	}
}

func TestHTMLErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string
	}{
		{"only scripts", "<html><head><script>alert(1)</script></head><body><style>p{}</style></body></html>", "no text could be extracted from this HTML file"},
		{"nested too deep", strings.Repeat("<div>", 600) + "x", "nested too deeply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Text(context.Background(), "p.html", []byte(tt.data), Limits{})
			assertInvalid(t, err, tt.want)
		})
	}
}
