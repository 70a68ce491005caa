package knowledge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/extract"
	"github.com/agentorch/agentorch/shared/localembed"
)

// sectioned is a document of sections whose chunks (60 characters) fall on either side of its
// headings.
const sectionedMD = "# Returns policy\n\nIntro paragraph about the shop and what it sells to everyone.\n\n" +
	"## Refunds\n\nMoney comes back within fourteen days of the parcel arriving here.\n\n" +
	"Refunds go to the card that paid, never to another one at all.\n\n" +
	"## Exchanges\n\nAn item may be swapped for another size while stock lasts.\n"

const sectionedHTML = `<html><body><h1>Returns policy</h1><p>Intro paragraph about the shop and what it sells to everyone.</p>
<h2>Refunds</h2><p>Money comes back within fourteen days of the parcel arriving here.</p>
<p>Refunds go to the card that paid, never to another one at all.</p>
<h2>Exchanges</h2><p>An item may be swapped for another size while stock lasts.</p></body></html>`

// TestHeadersNameNearestSection: every chunk's header is its file's name without extension and
// the last heading at or before the chunk's start, from Markdown and from HTML; a text without
// headings gives the name alone.
func TestHeadersNameNearestSection(t *testing.T) {
	sp, err := chunk.New(domain.Chunking{Strategy: chunk.StrategyRecursive, ChunkSize: 100, ChunkOverlap: 0, SplitBy: chunk.SplitChar,
		RecursiveSeparators: chunk.AttheneSeparators()})
	if err != nil {
		t.Fatal(err)
	}
	section := func(text string) string { // the section a chunk's text is from, read off the document
		switch {
		case strings.Contains(text, "Intro"), strings.Contains(text, "Returns policy"):
			return "Returns policy"
		case strings.Contains(text, "Money"), strings.Contains(text, "card"), text == "## Refunds", text == "Refunds":
			return "Refunds"
		}
		return "Exchanges"
	}
	for _, tc := range []struct{ name, data, base string }{
		{"policy.md", sectionedMD, "policy"},
		{"policy.v2.html", sectionedHTML, "policy.v2"},
	} {
		res, err := extract.Text(context.Background(), tc.name, []byte(tc.data), extract.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		texts, starts := splitAt(sp, res.Text)
		if len(texts) < 4 {
			t.Fatalf("%s: %d chunks %q: the case tests nothing", tc.name, len(texts), texts)
		}
		for i, h := range headers(tc.name, res.Headings, starts) {
			if want := tc.base + " — " + section(texts[i]); h != want {
				t.Errorf("%s: chunk %d %q has header %q, want %q", tc.name, i, texts[i], h, want)
			}
		}
	}
	res, err := extract.Text(context.Background(), "notes.txt", []byte("just some words\n\nand more of them"), extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	_, starts := splitAt(sp, res.Text)
	if got := headers("notes.txt", res.Headings, starts); len(got) != 1 || got[0] != "notes" {
		t.Errorf("headers of a text without headings: %q, want [notes]", got)
	}
}

// splitOnly is a splitter that gives no offsets.
type splitOnly struct{ sp *chunk.Splitter }

func (s splitOnly) Split(text string) []string { return s.sp.Split(text) }

// TestSplitAtWithoutOffsets: a splitter without offsets gets each chunk's start found in the
// text, the same as shared/chunk's own, overlapping chunks and repeated text included.
func TestSplitAtWithoutOffsets(t *testing.T) {
	sp, err := chunk.New(domain.Chunking{Strategy: chunk.StrategyRecursive, ChunkSize: 20, ChunkOverlap: 8, SplitBy: chunk.SplitWord,
		RecursiveSeparators: chunk.AttheneSeparators()})
	if err != nil {
		t.Fatal(err)
	}
	para := "A paragraph said twice, word for word. "
	text := words(30, " ") + "\n\n" + para + "\n\n" + words(50, " ") + "\n\n" + para + "\n\n" + words(40, " ")
	wantTexts, wantStarts := splitAt(sp, text)
	gotTexts, gotStarts := splitAt(splitOnly{sp}, text)
	if strings.Join(gotTexts, "|") != strings.Join(wantTexts, "|") {
		t.Fatal("the chunks differ")
	}
	for i := range wantStarts {
		if gotStarts[i] != wantStarts[i] {
			t.Errorf("chunk %d starts at %d, shared/chunk says %d", i, gotStarts[i], wantStarts[i])
		}
	}
}

// TestWithHeadersClipped: a header takes what the chunk leaves of the embedder's limit (less a
// token), the heading's last words going first, then the name's; with no room it is left out;
// the chunk's text follows it whole, and the text returned (texts) is not touched.
func TestWithHeadersClipped(t *testing.T) {
	e := &lineEmbedder{max: 20}
	const hdr = "install guide — Setting up the server on Debian"
	for _, tc := range []struct {
		name   string
		text   string
		header string // what it is embedded after ("": nothing); checked for one text
	}{
		{"room for all", words(10, " "), hdr},                                           // room 20-10-1 = 9, the header's 9 words
		{"heading clipped", words(11, " "), "install guide — Setting up the server on"}, // room 8
		{"dash dropped", words(16, " "), "install guide"},                               // room 3: "install guide —" less the dash
		{"name clipped", words(18, " "), "install"},                                     // room 1
		{"no room", words(19, " "), ""},                                                 // room 0
		{"over the limit", words(25, " "), ""},                                          // pieces of 13 and 12 tokens
		{"over the limit, pieces of 17", words(34, " "), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fits []fitted
			texts, f := fitCounted(e, []string{tc.text}, &fits)
			got := withHeaders(f, texts, []string{hdr}, fits)
			joined := strings.Join(texts, " ")
			if strings.Join(strings.Fields(joined), " ") != strings.Join(strings.Fields(tc.text), " ") {
				t.Fatalf("the texts returned changed: %q", texts)
			}
			for i, g := range got {
				if !strings.HasSuffix(g, texts[i]) {
					t.Errorf("embedded %q does not end with its text %q", g, texts[i])
				}
				if n := e.Tokens(g); n > e.max {
					t.Errorf("embedded %q is %d tokens, over the limit %d", g, n, e.max)
				}
				h := strings.TrimSuffix(strings.TrimSuffix(g, texts[i]), headerSep)
				if h == g {
					h = ""
				}
				if !strings.HasPrefix(hdr, h) {
					t.Errorf("header %q is not a clipped %q", h, hdr)
				}
			}
			if len(texts) == 1 {
				want := tc.text
				if tc.header != "" {
					want = tc.header + headerSep + tc.text
				}
				if got[0] != want {
					t.Errorf("embedded\n%q\nwant\n%q", got[0], want)
				}
			}
		})
	}
}

// TestWithHeadersNoLimit: an embedder without a limit gets the whole header.
func TestWithHeadersNoLimit(t *testing.T) {
	e := &lineEmbedder{max: 0}
	var fits []fitted
	texts, f := fitCounted(e, []string{"a b", "c"}, &fits)
	got := withHeaders(f, texts, []string{"n — h", "n"}, fits)
	if want := []string{"n — h\n\na b", "n\n\nc"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestLocalHeadersFitModel: with the real local model (128 tokens) and its default chunking,
// every chunk of the eval's licence, manual and a chapter of Persuasion embedded with its
// header is within the model's limit, so the model reads the chunk's text whole; most chunks
// carry at least the file name.
func TestLocalHeadersFitModel(t *testing.T) {
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	files, err := localembed.EnsureFiles(ctx, filepath.Join(root, ".cache", "models"))
	if err != nil {
		t.Skipf("the local model's files cannot be fetched: %v", err)
	}
	providers, err := embeddings.New(embeddings.Options{Local: local.Loader(filepath.Dir(files))})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := providers.Embedder(ctx, domain.Embedding{Provider: "local"})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := chunk.New(defaultChunking(emb.MaxTokens()))
	if err != nil {
		t.Fatal(err)
	}
	split := sp.WithTokens(emb.Tokens)
	for _, p := range []string{"testdata/eval/mpl/MPL-2.0.txt", "testdata/eval/apt-get/apt-get.8.txt", "../chunk/testdata/persuasion.txt"} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 60000 {
			data = data[:60000]
		}
		res, err := extract.Text(ctx, filepath.Base(p), data, extract.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		chunks, starts := splitAt(split, res.Text)
		var fits []fitted
		texts, f := fitCounted(emb, chunks, &fits)
		got := withHeaders(f, texts, headers(filepath.Base(p), res.Headings, starts), fits)
		headed := 0
		for i, g := range got {
			if n := emb.Tokens(g); n > emb.MaxTokens() {
				t.Errorf("%s: chunk %d embedded as %d tokens, over %d: %q", p, i, n, emb.MaxTokens(), g)
			}
			if g != texts[i] {
				headed++
			}
		}
		if headed*2 < len(got) {
			t.Errorf("%s: %d of %d chunks have a header, want most", p, headed, len(got))
		}
		t.Logf("%s: %d chunks, %d with a header", p, len(got), headed)
	}
}

// BenchmarkContextualHeaders times what ingestion does before embedding, over the eval's
// manual with the local model's tokenizer and default chunking: plain (split, fit to the
// limit) against with contextual headers (split with offsets, fit counting, headers, clipped
// and joined). Embedding, which dwarfs both, is left out.
func BenchmarkContextualHeaders(b *testing.B) {
	root, err := localstack.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	files, err := localembed.EnsureFiles(ctx, filepath.Join(root, ".cache", "models"))
	if err != nil {
		b.Skipf("the local model's files cannot be fetched: %v", err)
	}
	providers, err := embeddings.New(embeddings.Options{Local: local.Loader(filepath.Dir(files))})
	if err != nil {
		b.Fatal(err)
	}
	emb, err := providers.Embedder(ctx, domain.Embedding{Provider: "local"})
	if err != nil {
		b.Fatal(err)
	}
	sp, err := chunk.New(defaultChunking(emb.MaxTokens()))
	if err != nil {
		b.Fatal(err)
	}
	split := sp.WithTokens(emb.Tokens)
	data, err := os.ReadFile("testdata/eval/apt-get/apt-get.8.txt")
	if err != nil {
		b.Fatal(err)
	}
	res, err := extract.Text(ctx, "apt-get.8.txt", data, extract.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("plain", func(b *testing.B) {
		b.SetBytes(int64(len(res.Text)))
		for b.Loop() {
			fitTokens(emb, split.Split(res.Text))
		}
	})
	b.Run("headers", func(b *testing.B) {
		b.SetBytes(int64(len(res.Text)))
		for b.Loop() {
			chunks, starts := splitAt(split, res.Text)
			var fits []fitted
			texts, f := fitCounted(emb, chunks, &fits)
			withHeaders(f, texts, headers("apt-get.8.txt", res.Headings, starts), fits)
		}
	})
}
