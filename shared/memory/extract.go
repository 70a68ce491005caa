package memory

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"unicode"

	"github.com/agentorch/agentorch/shared/domain"
)

// Extraction's bounds.
const (
	// MaxExtractedFacts is how many facts one extraction saves at most.
	MaxExtractedFacts = 10
	// extractMaxTokens bounds the model's answer: ten facts of a sentence or two each.
	extractMaxTokens = 1024
)

// DuplicateCandidates is how many of a scope's records nearest an extracted fact (one k-NN
// search) are compared with it: the fact is not saved again when one of them says the same in
// the same words, but for case, punctuation and spacing (sameFact).
//
// No score threshold decides it, because none can: measured with the local default embedder
// (use-lite-glove, TestDuplicateScore), facts that differ in one word score as high as the same
// fact reworded or higher — "meeting at 3 pm" / "at 4 pm" .9995, "flight on Monday" /
// "Tuesday" .998, "34" / "35 years old" .996, "favourite colour is blue" / "green" .979 — while
// "allergic to peanuts" / "has a peanut allergy" scores .902 and the same sentence lower-cased
// .948. A threshold low enough to catch paraphrases would drop every changed fact (the user
// moved, the meeting moved), which is worse than a paraphrase saved twice; one high enough to
// keep every changed fact (over .9995) catches nothing the text comparison misses. The nearest
// few, not the nearest one, because a longer record of the same words ("lives in Lyon, France")
// may rank above the repeat.
const DuplicateCandidates = 3

// extractGuidance is what an extraction looks for unless memory.extract.instructions replaces it.
const extractGuidance = `You read one turn of a conversation between a user and an assistant and pick out the durable facts about the user that are worth remembering in later conversations: who they are, their preferences, their circumstances, their plans and commitments. Leave out what only matters to this turn, what the assistant says of itself, guesses, and anything the user asks not to be remembered.`

// extractFormat is how an extraction answers, whatever the instructions.
const extractFormat = `Answer with JSON only, in this shape: {"memories": ["...", "..."]}. Each memory is one short sentence that stands on its own. At most 10. Answer {"memories": []} when nothing is worth remembering.`

// extractSystem is the system prompt of an extraction.
func extractSystem(instructions string) string {
	guidance := extractGuidance
	if strings.TrimSpace(instructions) != "" {
		guidance = instructions
	}
	return domain.MemoryExtractHeading + "\n\n" + guidance + "\n\n" + extractFormat
}

// extractTurn is the turn an extraction reads: the user's message and the reply, each in its tag.
func extractTurn(user, reply string) domain.Turn {
	return domain.Turn{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartText,
		Text: "<user_message>\n" + user + "\n</user_message>\n\n<assistant_reply>\n" + reply + "\n</assistant_reply>"}}}
}

// ProcessJob runs one queued extraction (the memoryextract function's processor): the model
// reads the turn, and each fact it names that the scope does not remember already (none of its
// DuplicateCandidates nearest records says the same) is saved. A job or an answer that cannot be read saves
// nothing and is no error, since a retry would give the same; failures that may pass
// (throttling, the index or the table down) are errors, for the queue to deliver the job again
// (the facts saved before are then found as duplicates).
func (s *Service) ProcessJob(ctx context.Context, body string) error {
	var job domain.MemoryExtractJob
	if err := json.Unmarshal([]byte(body), &job); err != nil {
		return nil
	}
	if checkScope(job.Scope) != nil || strings.TrimSpace(job.User) == "" || s.d.Models == nil {
		return nil
	}
	model, err := s.d.Models.Model(job.Provider)
	if err != nil {
		return nil // a provider the deployment does not offer
	}
	zero := 0.0
	resp, err := model.Converse(ctx, domain.ModelRequest{Provider: job.Provider, Model: job.Model,
		System: extractSystem(job.Instructions), Turns: []domain.Turn{extractTurn(job.User, job.Reply)},
		MaxTokens: extractMaxTokens, Temperature: &zero})
	if err != nil {
		if domain.KindOf(err).Retryable() {
			return err
		}
		return nil
	}
	facts := parseFacts(resp.Text())
	if len(facts) == 0 {
		return nil
	}
	e, err := s.embed(ctx, facts)
	if err != nil {
		return err
	}
	src := domain.MemorySource{Type: domain.MemorySourceExtraction, ExecutionID: job.ExecutionID, SessionID: job.SessionID}
	for i, f := range facts {
		hits, err := s.search(ctx, job.Scope, f, e, i, DuplicateCandidates)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(hits, func(h domain.MemoryHit) bool { return sameFact(h.Record.Text, f) }) {
			continue
		}
		if _, err := s.save(ctx, job.Scope, f, src, e, i); err != nil {
			return err
		}
	}
	return nil
}

// parseFacts reads the facts of an extraction's answer: the JSON object in it (fenced or not),
// its "memories" strings trimmed, each cut to domain.MaxMemoryTextLength, empty ones and repeats
// left out, at most MaxExtractedFacts. An answer without one is no facts.
func parseFacts(answer string) []string {
	start, end := strings.Index(answer, "{"), strings.LastIndex(answer, "}")
	if start < 0 || end < start {
		return nil
	}
	var v struct {
		Memories []any `json:"memories"`
	}
	if json.Unmarshal([]byte(answer[start:end+1]), &v) != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range v.Memories {
		t, ok := m.(string)
		if !ok {
			continue
		}
		t = strings.TrimSpace(clip(strings.ToValidUTF8(strings.TrimSpace(t), ""), domain.MaxMemoryTextLength))
		if t == "" || seen[strings.ToLower(t)] {
			continue
		}
		seen[strings.ToLower(t)] = true
		out = append(out, t)
		if len(out) == MaxExtractedFacts {
			break
		}
	}
	return out
}

// sameFact reports whether a and b are the same words but for case, punctuation, symbols and
// spacing.
func sameFact(a, b string) bool { return factWords(a) == factWords(b) }

// factWords is s lower-cased, each run of characters other than letters and digits one space.
func factWords(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }), " ")
}
