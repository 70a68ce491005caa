package knowledge

import (
	"path"
	"sort"
	"strings"

	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/extract"
)

// Contextual headers (chunking_strategy.contextual_headers): each chunk is embedded as
//
//	<file name without extension> — <nearest heading before the chunk>
//
//	<the chunk's text>
//
// so that a chunk that never names its document or section ("the licence is terminated if …")
// is embedded near the questions that do; the chunk's text is stored and returned as it is,
// and the chunks are the splitter's, unchanged. The header is what the embedder reads beside
// the chunk: it is clipped, the heading's last words first, to the tokens the chunk leaves
// under the model's limit (the local model reads 128, its chunks are up to 120), counted from
// the tokenization fitTokens does anyway: no chunk is tokenized a second time.

// headerSep joins a header to its chunk: a paragraph break, which the local embedder reads as a
// space.
const headerSep = "\n\n"

// headerDash joins the file name to the heading.
const headerDash = " — "

// maxHeaderName bounds the file name in a header (a file's name may be 255 bytes).
const maxHeaderName = 120

// chunkOffsetter is a splitter that says where its chunks start (shared/chunk's Chunks).
type chunkOffsetter interface {
	Chunks(text string) []chunk.Chunk
}

// splitAt cuts text into chunks and says where each starts in it: the splitter's own offsets
// where it has them, else each chunk found after the start of the one before (a chunk not
// found, which a splitter that rewrites text may give, takes the offset before it; in text that
// repeats itself, a chunk may be found where an earlier copy of it is).
func splitAt(sp Splitter, text string) ([]string, []int) {
	if c, ok := sp.(chunkOffsetter); ok {
		cs := c.Chunks(text)
		texts, starts := make([]string, len(cs)), make([]int, len(cs))
		for i, ch := range cs {
			texts[i], starts[i] = ch.Text, ch.Start
		}
		return texts, starts
	}
	texts := sp.Split(text)
	starts := make([]int, len(texts))
	at, from := 0, 0
	for i, t := range texts {
		if j := strings.Index(text[from:], t); j >= 0 {
			at = from + j
		}
		starts[i], from = at, min(at+1, len(text))
	}
	return texts, starts
}

// headers are the contextual headers of chunks starting at starts in a file's text: its name
// without extension, and " — " and the last heading at or before the chunk's start, if any.
func headers(fileName string, heads []extract.Heading, starts []int) []string {
	name := strings.TrimSpace(strings.TrimSuffix(fileName, path.Ext(fileName)))
	if name == "" {
		name = strings.TrimSpace(fileName)
	}
	name = clipBytes(strings.Join(strings.Fields(name), " "), maxHeaderName)
	out := make([]string, len(starts))
	h := -1 // the last heading at or before the chunk's start (chunks come in order)
	for i, st := range starts {
		for h+1 < len(heads) && heads[h+1].Offset <= st {
			h++
		}
		for h >= 0 && heads[h].Offset > st { // a chunk starting before the one before it
			h--
		}
		out[i] = name
		if h >= 0 && heads[h].Text != "" {
			out[i] = name + headerDash + heads[h].Text
		}
	}
	return out
}

// withHeaders gives what each text is embedded as: its chunk's header (of headers, by
// fitted.from), clipped to the tokens the text leaves under limit (the embedder's MaxTokens; 0
// or less: no limit), a paragraph break and the text. A header of which not even the file
// name's first word fits is left out.
func withHeaders(f *fitter, texts, hdrs []string, fits []fitted) []string {
	out := make([]string, len(texts))
	costs := map[string][]int{} // per header, the running token cost of its words
	words := map[string][]chunk.Word{}
	for i, t := range texts {
		h := hdrs[fits[i].from]
		if f.limit > 0 {
			room := f.limit - fits[i].tokens - 1 // one token for the break, and words read in context
			cum, ok := costs[h]
			if !ok {
				w := chunk.Words(h, f.tokens)
				cum = make([]int, len(w))
				sum := 0
				for k, x := range w {
					sum += x.Cost
					cum[k] = sum
				}
				costs[h], words[h] = cum, w
			}
			k := sort.Search(len(cum), func(k int) bool { return cum[k] > room }) // the words that fit
			switch {
			case k == 0:
				out[i] = t
				continue
			case k < len(cum):
				h = strings.TrimSuffix(h[:words[h][k-1].End], strings.TrimSpace(headerDash))
				h = strings.TrimSpace(h)
			}
		}
		out[i] = h + headerSep + t
	}
	return out
}

// clipBytes cuts s to at most n bytes, at a character boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}
