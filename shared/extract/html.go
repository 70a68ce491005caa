package extract

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// htmlText extracts the text a browser would show: no head (title and metadata included), no
// script, style, noscript or template, nothing marked hidden; entities decoded. Block elements
// become line breaks and paragraph breaks (so the splitter's "\n\n" finds paragraphs), table cells
// are joined with " | ", list items start with "- " or their number, and <pre> keeps its
// whitespace.
func htmlText(ctx context.Context, in input) (output, error) {
	data, cs, err := decodeHTML(in.data)
	if err != nil {
		return output{}, err
	}
	if n := htmlNodeLimit(in.lim); htmlNodes(data, n) > n {
		return output{}, invalidf("the HTML file has more than %d elements and text runs, the most one extraction reads; split it into smaller files", n)
	}
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		// The parser accepts any byte sequence; its only refusal is nesting beyond 512 elements.
		return output{}, wrapInvalid(err, "the HTML file could not be read: its elements are nested too deeply")
	}
	if err := ctx.Err(); err != nil {
		return output{}, contextError(ctx, "")
	}
	w := htmlWalker{l: layout{limit: in.lim.MaxText + 1}}
	w.node(doc)
	if w.l.overflow {
		return output{}, invalidf("the file holds more than %s of text, the limit", formatSize(in.lim.MaxText))
	}
	w.l.endHeading()
	return output{text: w.l.String(), charset: cs, headings: w.l.heads}, nil
}

// htmlBytesPerNode sets the most nodes a parse may build, as Limits.MaxText divided by it: the
// parser keeps a tree of about 120 bytes per node, so 4 MiB of "<p>" built 155 MB.
const htmlBytesPerNode = 64

func htmlNodeLimit(lim Limits) int { return max(lim.MaxText/htmlBytesPerNode, 1024) }

// htmlNodes counts the tokens that become nodes of the tree (all but end tags), stopping past
// limit. The tokenizer keeps one token at a time.
func htmlNodes(data []byte, limit int) int {
	z := html.NewTokenizer(bytes.NewReader(data))
	n := 0
	for n <= limit {
		switch z.Next() {
		case html.ErrorToken:
			return n
		case html.EndTagToken:
		default:
			n++
		}
	}
	return n
}

// decodeHTML converts HTML to UTF-8. The order follows the HTML standard's, with one change: a
// byte-order mark wins, then a file that is valid UTF-8 throughout is UTF-8 (the standard's prescan
// only looks at the first 1024 bytes and would call an ASCII-headed UTF-8 file windows-1252), then
// a <meta charset> in the first 1024 bytes, then windows-1252.
func decodeHTML(data []byte) ([]byte, string, error) {
	enc, name, certain := charset.DetermineEncoding(data, "text/html")
	if !certain && utf8.Valid(data) {
		return bytes.TrimPrefix(data, bomUTF8), "utf-8", nil
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return nil, "", wrapInvalid(err, "the HTML file is not valid "+name+" text")
	}
	return bytes.TrimPrefix(out, bomUTF8), name, nil
}

// htmlWalker turns a parsed document into text.
type htmlWalker struct {
	l     layout
	pre   int   // depth of <pre> and <textarea> elements around the current node
	lists []int // per open list: -1 for <ul>, else the next number of an <ol>
	rows  []int // per open table row: cells seen so far
}

// Elements whose content is never shown as text.
var hiddenElements = map[atom.Atom]bool{
	atom.Head: true, atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Canvas: true, atom.Video: true,
	atom.Audio: true, atom.Svg: true, atom.Select: true, atom.Datalist: true, atom.Title: true,
}

// Elements that stand on their own line, and those that are paragraphs of their own.
var (
	lineElements = map[atom.Atom]bool{
		atom.Div: true, atom.Li: true, atom.Tr: true, atom.Dt: true, atom.Dd: true,
		atom.Figcaption: true, atom.Caption: true, atom.Summary: true, atom.Legend: true,
		atom.Option: true, atom.Center: true, atom.Body: true, atom.Html: true, atom.Tbody: true,
		atom.Thead: true, atom.Tfoot: true, atom.Label: true,
	}
	paraElements = map[atom.Atom]bool{
		atom.P: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true,
		atom.H6: true, atom.Blockquote: true, atom.Pre: true, atom.Table: true, atom.Ul: true,
		atom.Ol: true, atom.Dl: true, atom.Section: true, atom.Article: true, atom.Header: true,
		atom.Footer: true, atom.Nav: true, atom.Aside: true, atom.Main: true, atom.Figure: true,
		atom.Hr: true, atom.Details: true, atom.Form: true, atom.Fieldset: true, atom.Address: true,
		atom.Dialog: true, atom.Hgroup: true, atom.Textarea: true,
	}
)

func (w *htmlWalker) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		if w.pre > 0 {
			w.l.verbatim(n.Data)
		} else {
			w.l.flow(n.Data)
		}
		return
	case html.ElementNode:
		if hiddenElements[n.DataAtom] || isHidden(n) {
			return
		}
	case html.DocumentNode:
	default: // comments, doctype
		return
	}
	w.open(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
	w.close(n)
}

// open writes what comes before an element's content.
func (w *htmlWalker) open(n *html.Node) {
	a := n.DataAtom
	switch {
	case paraElements[a]:
		w.l.brk(breakPara)
	case lineElements[a]:
		w.l.brk(breakLine)
	}
	switch a {
	case atom.Br:
		// Two <br> with no text between them are how many pages mark paragraphs.
		if w.l.pending >= breakLine {
			w.l.brk(breakPara)
		}
		w.l.brk(breakLine)
	case atom.Pre, atom.Textarea:
		w.pre++
	case atom.Ul, atom.Menu:
		w.lists = append(w.lists, -1)
	case atom.Ol:
		start := 1
		if v, err := strconv.Atoi(attr(n, "start")); err == nil {
			start = v
		}
		w.lists = append(w.lists, start)
	case atom.Li:
		marker := "- "
		if k := len(w.lists) - 1; k >= 0 && w.lists[k] >= 0 {
			marker = strconv.Itoa(w.lists[k]) + ". "
			w.lists[k]++
		}
		w.l.mark(marker)
	case atom.Tr:
		w.rows = append(w.rows, 0)
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.l.beginHeading(int(n.Data[1] - '0'))
	case atom.Td, atom.Th:
		if k := len(w.rows) - 1; k >= 0 {
			if w.rows[k] > 0 {
				w.l.brk(breakCell)
			}
			w.rows[k]++
		}
	}
}

// close writes what comes after an element's content.
func (w *htmlWalker) close(n *html.Node) {
	a := n.DataAtom
	switch a {
	case atom.Pre, atom.Textarea:
		w.pre--
	case atom.Ul, atom.Menu, atom.Ol:
		if len(w.lists) > 0 {
			w.lists = w.lists[:len(w.lists)-1]
		}
	case atom.Tr:
		if len(w.rows) > 0 {
			w.rows = w.rows[:len(w.rows)-1]
		}
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.l.endHeading()
	}
	switch {
	case paraElements[a]:
		w.l.brk(breakPara)
	case lineElements[a]:
		w.l.brk(breakLine)
	}
}

// isHidden reports elements hidden by attribute or an inline display:none / visibility:hidden.
func isHidden(n *html.Node) bool {
	for _, a := range n.Attr {
		switch a.Key {
		case "hidden":
			return true
		case "style":
			s := strings.ToLower(strings.Join(strings.Fields(a.Val), ""))
			if strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden") {
				return true
			}
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
