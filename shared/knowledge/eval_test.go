package knowledge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/extract"
)

// The retrieval evaluation (BenchmarkRetrievalQuality, testdata/eval/README.md) asks the
// questions of testdata/eval/questions.json of the first chapters of Persuasion
// (shared/chunk/testdata/persuasion.txt), one file per chapter. A hit answers a question when
// its text holds the question's answer phrase, whitespace collapsed. TestRetrievalEvalSet keeps
// the set honest: if the text, the chunker or the extraction change, it says which questions no
// longer have a chunk to find.

// Bounds of the labelled set.
const (
	evalChapters     = 6   // chapters 1..evalChapters are the corpus
	evalMinQuestions = 40  // fewer makes one question worth more than 2.5 points of recall
	evalMaxQuestions = 60  // the range
	evalMinChunks    = 250 // the corpus is "a few hundred chunks" under chunk.DefaultLocal
	evalMaxChunks    = 400
	evalMinWords     = 5 // an answer phrase is specific enough to name one passage...
	evalMaxWords     = 15
	evalMaxHolders   = 3 // ...and held by at most this many chunks (overlap puts it in two)
)

// evalQuestion is one labelled question: Answer is a verbatim phrase of chapter Chapter.
type evalQuestion struct {
	ID       string `json:"id"`
	Chapter  int    `json:"chapter"`
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// evalFile is one file of the corpus: a chapter of the novel as it is uploaded.
type evalFile struct {
	Name string
	Text string
}

var chapterHeading = regexp.MustCompile(`(?m)^Chapter (\d+)$`)

// evalCorpus cuts chapters 1..evalChapters out of persuasion.txt, each from its heading to the
// next one, named persuasion-chapter-NN.txt. The text is the book's, unchanged.
func evalCorpus(tb testing.TB) []evalFile {
	tb.Helper()
	text := persuasion(tb)
	heads := chapterHeading.FindAllStringSubmatchIndex(text, -1)
	if len(heads) <= evalChapters {
		tb.Fatalf("persuasion.txt has %d chapter headings, want more than %d", len(heads), evalChapters)
	}
	files := make([]evalFile, evalChapters)
	for i := range files {
		if n, _ := strconv.Atoi(text[heads[i][2]:heads[i][3]]); n != i+1 {
			tb.Fatalf("heading %d of persuasion.txt is chapter %d", i+1, n)
		}
		files[i] = evalFile{Name: fmt.Sprintf("persuasion-chapter-%02d.txt", i+1),
			Text: strings.TrimSpace(text[heads[i][0]:heads[i+1][0]]) + "\n"}
	}
	return files
}

// evalQuestions reads the labelled set; an unknown field is an error.
func evalQuestions(tb testing.TB) []evalQuestion {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "eval", "questions.json"))
	if err != nil {
		tb.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var qs []evalQuestion
	if err := dec.Decode(&qs); err != nil {
		tb.Fatalf("questions.json: %v", err)
	}
	return qs
}

// collapse joins the words of s with single spaces: the corpus is wrapped at about 70
// characters, so a phrase may span lines in a chunk.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// answers reports whether a chunk's text holds a question's answer phrase.
func answers(text string, q evalQuestion) bool {
	return strings.Contains(collapse(text), collapse(q.Answer))
}

// evalChunks cuts the corpus as an ingestion with the local embedder does: extraction, then
// chunk.DefaultLocal.
func evalChunks(tb testing.TB, files []evalFile) []string {
	tb.Helper()
	split, err := chunk.New(chunk.DefaultLocal())
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, f := range files {
		res, err := extract.Text(context.Background(), f.Name, []byte(f.Text), extract.Limits{})
		if err != nil {
			tb.Fatalf("extract %s: %v", f.Name, err)
		}
		out = append(out, split.Split(res.Text)...)
	}
	return out
}

func TestRetrievalEvalSet(t *testing.T) {
	files := evalCorpus(t)
	qs := evalQuestions(t)
	chunks := evalChunks(t, files)
	if n := len(chunks); n < evalMinChunks || n > evalMaxChunks {
		t.Errorf("the corpus (chapters 1-%d) is %d chunks under chunk.DefaultLocal, want %d to %d", evalChapters, n, evalMinChunks, evalMaxChunks)
	}
	if n := len(qs); n < evalMinQuestions || n > evalMaxQuestions {
		t.Errorf("%d questions, want %d to %d", n, evalMinQuestions, evalMaxQuestions)
	}
	ids := map[string]bool{}
	questions := map[string]string{}
	for _, q := range qs {
		if q.ID == "" || ids[q.ID] {
			t.Errorf("question id %q is empty or not unique", q.ID)
		}
		ids[q.ID] = true
		key := strings.ToLower(collapse(q.Question))
		if key == "" {
			t.Errorf("%s: no question", q.ID)
		} else if other, dup := questions[key]; dup {
			t.Errorf("%s asks the same as %s: %q", q.ID, other, q.Question)
		}
		questions[key] = q.ID
		if n := len(strings.Fields(q.Answer)); n < evalMinWords || n > evalMaxWords {
			t.Errorf("%s: the answer %q is %d words, want %d to %d", q.ID, q.Answer, n, evalMinWords, evalMaxWords)
		}
		if q.Chapter < 1 || q.Chapter > evalChapters {
			t.Errorf("%s: chapter %d is not in the corpus (1-%d)", q.ID, q.Chapter, evalChapters)
			continue
		}
		if !strings.Contains(collapse(files[q.Chapter-1].Text), collapse(q.Answer)) {
			t.Errorf("%s: the answer %q is not in chapter %d", q.ID, q.Answer, q.Chapter)
			continue
		}
		var holders []int
		for i, c := range chunks {
			if answers(c, q) {
				holders = append(holders, i)
			}
		}
		if n := len(holders); n < 1 || n > evalMaxHolders {
			t.Errorf("%s: the answer %q is in %d chunks %v, want 1 to %d (a phrase across a chunk boundary is in none)", q.ID, q.Answer, n, holders, evalMaxHolders)
		}
	}
}

// TestRetrievalEvalJudge pins the relevance judgement on chunks the set does not depend on:
// line breaks and runs of spaces do not matter, words and punctuation do.
func TestRetrievalEvalJudge(t *testing.T) {
	q := evalQuestion{Answer: "Kellynch Hall was to be let.  This, however, was a profound secret"}
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"Walter's have found too much.  Kellynch Hall was to be let.  This,\nhowever, was a profound secret, not to be breathed", true},
		{"Kellynch Hall was to be let. This, however,\n\nwas a profound secret", true},
		{"Kellynch Hall was to be let. This, however, was a secret", false},
		{"Kellynch Hall was to be let, this, however, was a profound secret", false},
		{"kellynch hall was to be let. this, however, was a profound secret", false},
	} {
		if got := answers(tt.text, q); got != tt.want {
			t.Errorf("answers(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
