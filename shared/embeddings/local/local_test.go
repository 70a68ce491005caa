package local_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/glove"
	"github.com/agentorch/agentorch/shared/localembed"
)

// modelCache is the repository's cache of the local model's files (.cache/models), fetched once
// by localembed.EnsureFiles; the test is skipped only when they cannot be fetched (no npm, no
// network on a first run).
func modelCache(t testing.TB) string {
	t.Helper()
	dir, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, ".cache", "models")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := localembed.EnsureFiles(ctx, cache); err != nil {
		t.Skipf("the local model's files are not cached and cannot be fetched: %v", err)
	}
	return cache
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestLocalEmbedsThroughTheRealModel(t *testing.T) {
	p, err := embeddings.New(embeddings.Options{Local: local.Loader(modelCache(t))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	useLite := domain.Embedding{Provider: "local", Model: "use-lite"}
	e, err := p.Embedder(ctx, useLite)
	if err != nil {
		t.Fatal(err)
	}
	if e.Dimensions() != 512 || e.MaxTokens() != 128 || e.Name() != "use-lite" {
		t.Errorf("Dimensions %d MaxTokens %d Name %q, want 512, 128, use-lite", e.Dimensions(), e.MaxTokens(), e.Name())
	}
	// The model's own tokenizer counts (the reference's ids for this text are in
	// KNOWLEDGE-NOTES.md: ten, newline and tab each an unknown token).
	if got := e.Tokens("Hello world.\nNew line\tTab"); got != 10 {
		t.Errorf("Tokens = %d, want 10", got)
	}

	in := []string{
		"how long do I have to return an item",
		"purchases may be sent back within thirty days",
		"the quarterly earnings call starts at nine",
	}
	got, err := e.Embed(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("%d vectors for %d texts", len(got), len(in))
	}
	for i, v := range got {
		if len(v) != 512 {
			t.Fatalf("vector %d: %d dimensions", i, len(v))
		}
		if n := dot(v, v); n < 0.999 || n > 1.001 {
			t.Errorf("vector %d: squared norm %v, want 1", i, n)
		}
	}
	if related, unrelated := dot(got[0], got[1]), dot(got[0], got[2]); related <= unrelated {
		t.Errorf("cosine to the paraphrase %.3f, to the unrelated text %.3f", related, unrelated)
	}

	// The model is loaded once: a second embedder shares it.
	again, err := p.Embedder(ctx, domain.Embedding{Provider: "local", Model: "use-lite", Dimensions: 512})
	if err != nil {
		t.Fatal(err)
	}
	if again != e {
		t.Error("the second embedder loaded the model again")
	}
}

func TestLocalLoadFailureIsNotRemembered(t *testing.T) {
	real, err := localembed.EnsureFiles(context.Background(), modelCache(t))
	if err != nil {
		t.Fatal(err)
	}
	// A cache that says it is complete but holds no model: EnsureFiles passes, Load fails.
	cache := t.TempDir()
	dir := filepath.Join(cache, filepath.Base(real))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := embeddings.New(embeddings.Options{Local: local.Loader(cache)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Embedder(context.Background(), domain.Embedding{Model: "use-lite"}); err == nil || domain.KindOf(err) != domain.KindInternal {
		t.Fatalf("Embedder without model files: %v, want an internal error", err)
	}

	// Once the files are there, the next call loads them.
	entries, err := os.ReadDir(real)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range entries {
		if err := os.Symlink(filepath.Join(real, f.Name()), filepath.Join(dir, f.Name())); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
	e, err := p.Embedder(context.Background(), domain.Embedding{Model: "use-lite"})
	if err != nil {
		t.Fatalf("Embedder after the files arrived: %v", err)
	}
	if e.Dimensions() != 512 {
		t.Errorf("Dimensions %d", e.Dimensions())
	}

	// A caller whose context has ended gets no model (nor a fetch) from an empty cache.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fresh, err := embeddings.New(embeddings.Options{Local: local.Loader(t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Embedder(ctx, domain.Embedding{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Embedder with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestLocalCountsTheTokensItReads: the local provider counts what its tokenizer reads of each
// text as embedded (whitespace normalised), at most MaxTokens (a longer text's tail is not embedded, so not counted).
func TestLocalCountsTheTokensItReads(t *testing.T) {
	p, err := embeddings.New(embeddings.Options{Local: local.Loader(modelCache(t))})
	if err != nil {
		t.Fatal(err)
	}
	e, err := p.Embedder(context.Background(), domain.Embedding{})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("refunds are accepted within thirty days ", 60)
	in := []string{"Hello world.\nNew line\tTab", long}
	c, ok := e.(interface {
		EmbedCounted(context.Context, []string) ([][]float32, int, error)
	})
	if !ok {
		t.Fatalf("%T does not count tokens", e)
	}
	vecs, n, err := c.EmbedCounted(context.Background(), in)
	if err != nil || len(vecs) != 2 {
		t.Fatalf("%d vectors, %v", len(vecs), err)
	}
	if e.Tokens(long) <= e.MaxTokens() {
		t.Fatalf("the long text has %d tokens, not more than %d", e.Tokens(long), e.MaxTokens())
	}
	// The first text is read as "Hello world. New line Tab" (Readable): 8 tokens, where as given
	// it holds 10 (its line break and tab each an unknown token).
	if want := 8 + e.MaxTokens(); n != want {
		t.Errorf("tokens = %d, want %d (8, and the long text's first %d)", n, want, e.MaxTokens())
	}
}

func TestReadable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"plain words", "plain words"},
		{"  \t\n", ""},
		{"Hello world.\nNew line\tTab", "Hello world. New line Tab"},
		{"  leading and trailing \r\n", "leading and trailing"},
		{"two  spaces", "two spaces"},
		{"para one.\n\n\tpara two.", "para one. para two."},
		{"no\u00a0break\u2028line\u3000ideographic", "no break line ideographic"},
		{"bad \xff byte", "bad \xff byte"},
		{"bad\t\xff byte", "bad \xff byte"},
	} {
		if got := local.Readable(c.in); got != c.want {
			t.Errorf("Readable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// tabbed are chunk-like texts laid out as files hold them: line breaks, blank lines, tab and
// space indentation, trailing spaces.
var tabbed = []string{
	"Section 4. Redistribution.\n\n\tYou may reproduce and distribute copies of the\n\tWork or Derivative Works thereof in any medium,\n\twith or without modifications.",
	"  Chapter 1\n\nSir Walter Elliot, of Kellynch Hall, in Somersetshire,   was a man who,\r\nfor his own amusement, never took up any book but the Baronetage. ",
	"how long\tdo I have\nto return an item?",
}

// TestLocalEmbedsWhitespaceNormalised: the provider embeds a text with tabs, line breaks and
// runs of spaces as it embeds the text with its whitespace collapsed (the model itself, given
// the text as it is, embeds it differently: tabs and line breaks are unknown tokens to it).
func TestLocalEmbedsWhitespaceNormalised(t *testing.T) {
	ctx := context.Background()
	e, m := localEmbedder(t)
	collapsed := make([]string, len(tabbed))
	for i, s := range tabbed {
		collapsed[i] = strings.Join(strings.Fields(s), " ")
	}
	got, err := e.Embed(ctx, tabbed)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Embed(ctx, collapsed)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := m.Embed(ctx, tabbed)
	if err != nil {
		t.Fatal(err)
	}
	for i := range tabbed {
		if c := dot(got[i], want[i]); c < 0.99999 {
			t.Errorf("text %d: cosine %.6f to the collapsed text's vector, want ≥ 0.99999", i, c)
		}
		if c := dot(raw[i], want[i]); c > 0.999 {
			t.Errorf("text %d: the model alone embeds it at cosine %.6f to the collapsed text: the case tests nothing", i, c)
		}
		// Tokens bounds what the model reads, and still counts the text as given.
		if n, read, asis := e.Tokens(tabbed[i]), len(m.Tokenize(collapsed[i])), len(m.Tokenize(tabbed[i])); n < read || n < asis {
			t.Errorf("text %d: Tokens %d, the model reads %d (%d as given)", i, n, read, asis)
		}
	}
	if tabbed[0] == collapsed[0] || !strings.Contains(tabbed[0], "\n\t") {
		t.Fatal("the caller's texts were changed")
	}
}

// TestLocalJoinedModel: the default local model, use-lite-glove, is one unit vector of 612
// dimensions whose cosine to another is 0.3 of use-lite's cosine plus 0.7 of GloVe's (each
// computed by its own model); it reads and counts as use-lite does, and shares its use-lite with
// the use-lite embedder (loaded once).
func TestLocalJoinedModel(t *testing.T) {
	cache := modelCache(t)
	ctx := context.Background()
	gdir, err := glove.EnsureFiles(ctx, cache)
	if err != nil {
		t.Skipf("the GloVe vectors cannot be fetched: %v", err)
	}
	p, err := embeddings.New(embeddings.Options{Local: local.Loader(cache)})
	if err != nil {
		t.Fatal(err)
	}
	e, err := p.Embedder(ctx, domain.Embedding{})
	if err != nil {
		t.Fatal(err)
	}
	use, err := p.Embedder(ctx, domain.Embedding{Model: "use-lite"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "use-lite-glove" || e.Dimensions() != 612 || e.MaxTokens() != use.MaxTokens() {
		t.Fatalf("default local model %q, %d dimensions, %d tokens; want use-lite-glove, 612, %d", e.Name(), e.Dimensions(), e.MaxTokens(), use.MaxTokens())
	}
	g, err := glove.Load(gdir)
	if err != nil {
		t.Fatal(err)
	}
	in := []string{"how long do I have to return an item", "purchases may be sent back\nwithin thirty days", "the quarterly earnings call starts at nine"}
	got, err := e.Embed(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	u, err := use.Embed(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	gv := g.Embed(in)
	for i, v := range got {
		if len(v) != 612 {
			t.Fatalf("vector %d: %d dimensions", i, len(v))
		}
		if n := dot(v, v); n < 0.999 || n > 1.001 {
			t.Errorf("vector %d: squared norm %v, want 1", i, n)
		}
		for j := range got {
			want := 0.3*dot(u[i], u[j]) + 0.7*dot(gv[i], gv[j])
			if c := dot(got[i], got[j]); math.Abs(c-want) > 1e-4 {
				t.Errorf("cosine(%d, %d) = %.5f, want 0.3·use-lite + 0.7·GloVe = %.5f", i, j, c, want)
			}
		}
	}
	for _, s := range in {
		if e.Tokens(s) != use.Tokens(s) {
			t.Errorf("Tokens(%q) = %d, use-lite counts %d", s, e.Tokens(s), use.Tokens(s))
		}
	}
}
