package embeddings

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

const maxMessageRunes = 300

// estimateTokens bounds from above the tokens a hosted model's tokenizer (byte-level BPE or
// SentencePiece, neither at hand) makes of text: a third of its UTF-8 bytes, rounded up, plus
// one per non-ASCII character. English averages about four bytes a token, so the bound is loose
// there; the extra count per non-ASCII character covers scripts that take one or two tokens a
// character (CJK: three bytes, counted as two). It keeps chunks from passing a model's limit
// unnoticed; it is not a bill.
func estimateTokens(text string) int {
	n := (len(text) + 2) / 3
	for _, r := range text {
		if r >= utf8.RuneSelf {
			n++
		}
	}
	return n
}

// normalize scales v to unit length in place unless it has it already (within float32
// rounding). OpenAI's and Titan V2's vectors are unit vectors; Titan V1's and some
// OpenAI-compatible servers' are not, and the index compares by cosine or inner product. A zero
// vector stays as it is.
func normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.Abs(sum-1) < 1e-4 {
		return
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
}

// mismatch is the error of a model answering with vectors of another size than the knowledge
// base's configuration: the configuration is at fault (an OpenAI-compatible server's model whose
// size the client named wrongly), so it is an invalid request naming both numbers.
func mismatch(model string, got, want int) error {
	return domain.Errorf(domain.KindInvalid,
		"The embedding model %s returned vectors of %d dimensions, but embedding_config.dimensions is %d", model, got, want)
}

// safeMessage bounds a provider message and strips control characters (and secret, when set)
// before a client sees it.
func safeMessage(s, secret string) string {
	if secret != "" {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s))
	if r := []rune(s); len(r) > maxMessageRunes {
		s = string(r[:maxMessageRunes]) + "…"
	}
	return s
}

// rejected is the error of a provider refusing a request as invalid, with its message.
func rejected(cause error, msg string) error {
	if msg == "" {
		msg = "invalid request"
	}
	return domain.Wrap(domain.KindInvalid, cause, "The embedding model rejected the request: "+msg)
}

// overloaded is the error of throttling that outlasted the retries or the deadline.
func overloaded(cause error) error {
	return domain.Wrap(domain.KindOverloaded, cause, "The embedding model is busy; retry shortly")
}

func wrapf(err error, format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, err)...)
}
