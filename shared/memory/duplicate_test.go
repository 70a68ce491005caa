package memory_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/memory"
)

// localEmbedder is the local default embedder (use-lite-glove), loaded once; the test is
// skipped when its files cannot be fetched.
var localEmbedder = sync.OnceValues(func() (domain.Embedder, error) {
	root, err := localstack.RepoRoot()
	if err != nil {
		return nil, err
	}
	providers, err := embeddings.New(embeddings.Options{Local: local.Loader(filepath.Join(root, ".cache", "models"))})
	if err != nil {
		return nil, err
	}
	return providers.Embedder(context.Background(), domain.Embedding{})
})

func defaultEmbedder(t testing.TB) domain.Embedder {
	t.Helper()
	emb, err := localEmbedder()
	if err != nil {
		t.Skipf("the local default embedder cannot be loaded: %v", err)
	}
	return emb
}

// score is the dense score OpenSearch gives two unit vectors (cosinesimil): (1 + cos)/2.
func score(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return (1 + dot) / 2
}

// duplicatePairs are facts an extraction may find again and facts it must keep apart: same is
// the same fact (reworded or not), words the same fact in the same words but for case,
// punctuation and spacing.
var duplicatePairs = []struct {
	a, b        string
	same, words bool
}{
	{"The user lives in Lyon.", "The user lives in Lyon", true, true},
	{"The user lives in Lyon.", "the user lives in lyon.", true, true},
	{"I live in Lyon.", "I live in Lyon", true, true},
	{"The user lives in Lyon.", "The user lives in Lyon.  ", true, true},
	{"The user's email is anna@example.com.", "The user's email is anna@example.com", true, true},
	{"The user is allergic to peanuts.", "The user has a peanut allergy.", true, false},
	{"The user's daughter is called Zoé.", "The user has a daughter named Zoé.", true, false},
	{"The user prefers short answers.", "The user likes answers to be short.", true, false},
	{"The user works as a nurse.", "The user is a nurse.", true, false},
	{"The user likes jazz.", "The user likes jazz music.", true, false},
	{"The user has two cats.", "The user has 2 cats.", true, false},
	{"The user lives in Lyon.", "The user lives in Paris.", false, false},
	{"The user is allergic to peanuts.", "The user is allergic to shellfish.", false, false},
	{"The user's daughter is called Zoé.", "The user's son is called Hugo.", false, false},
	{"The user prefers short answers.", "The user prefers detailed answers.", false, false},
	{"The user works as a nurse.", "The user works as a teacher.", false, false},
	{"The user has two cats.", "The user has a dog.", false, false},
	{"The user lives in Lyon.", "The user is allergic to peanuts.", false, false},
	{"The user's favourite colour is blue.", "The user's favourite colour is green.", false, false},
	{"My favourite colour is blue.", "My favourite colour is green.", false, false},
	{"I'm vegetarian.", "I'm vegan.", false, false},
	{"The user is 34 years old.", "The user is 35 years old.", false, false},
	{"The user likes coffee.", "The user does not like coffee.", false, false},
	{"The user's wife is called Anna.", "The user's wife is called Anne.", false, false},
	{"The user's flight leaves on Monday.", "The user's flight leaves on Tuesday.", false, false},
	{"The user drives a red car.", "The user drives a blue car.", false, false},
	{"The user speaks French.", "The user speaks German.", false, false},
	{"The user's email is anna@example.com.", "The user's email is anne@example.com.", false, false},
	{"The user's meeting is at 3 pm.", "The user's meeting is at 4 pm.", false, false},
	{"The user was born in 1990.", "The user was born in 1991.", false, false},
	{"The user stays in room 212.", "The user stays in room 213.", false, false},
	{"The user's order number is A-1234.", "The user's order number is A-1235.", false, false},
}

// TestDuplicateScore measures what tells an extracted fact the scope remembers already, with
// the local default embedder: the dense score (1 + cos)/2 of each pair is logged, and no
// threshold separates the same fact from a changed one (the highest different pair scores above
// the lowest paraphrase, and above the lowest repeat in other case), which is why
// memory.DuplicateCandidates compares words instead: every repeat in the same words is the same
// fact, and no pair of different facts is, however near their vectors.
func TestDuplicateScore(t *testing.T) {
	emb := defaultEmbedder(t)
	var texts []string
	for _, p := range duplicatePairs {
		texts = append(texts, p.a, p.b)
	}
	vecs, err := emb.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	minSame, minWords, maxDiff := 1.0, 1.0, 0.0
	for i, p := range duplicatePairs {
		s := score(vecs[2*i], vecs[2*i+1])
		t.Logf("%.4f same=%-5v words=%-5v %q / %q", s, p.same, p.words, p.a, p.b)
		switch {
		case p.words:
			minWords = min(minWords, s)
		case p.same:
			minSame = min(minSame, s)
		default:
			maxDiff = max(maxDiff, s)
		}
		if got := memory.SameFact(p.a, p.b); got != p.words {
			t.Errorf("SameFact(%q, %q) = %v, want %v", p.a, p.b, got, p.words)
		}
	}
	t.Logf("%s: lowest paraphrase %.4f, lowest repeat %.4f, highest different fact %.4f", emb.Name(), minSame, minWords, maxDiff)
	if maxDiff < minSame || maxDiff < minWords {
		t.Errorf("a score threshold now separates the same facts from different ones (%.4f < %.4f, %.4f): reconsider DuplicateCandidates", maxDiff, minSame, minWords)
	}
}
