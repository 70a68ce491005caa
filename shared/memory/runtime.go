package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// Search finds the topK records of a scope nearest query's meaning, best first, with one k-NN
// search, and says how many tokens embedding the query took. An empty query finds nothing and
// embeds nothing. topK is at least 1 and at most domain.MaxRecallTopK.
func (s *Service) Search(ctx context.Context, sc domain.MemoryScope, query string, topK int) ([]domain.MemoryHit, int, error) {
	if err := checkScope(sc); err != nil {
		return nil, 0, err
	}
	if topK < 1 || topK > domain.MaxRecallTopK {
		return nil, 0, domain.Invalid([]domain.FieldError{{Field: "top_k", Message: fmt.Sprintf("must be between 1 and %d", domain.MaxRecallTopK)}})
	}
	query = strings.TrimSpace(query)
	if query == "" {
		return []domain.MemoryHit{}, 0, nil
	}
	e, err := s.embed(ctx, []string{query})
	if err != nil {
		return nil, 0, err
	}
	hits, err := s.search(ctx, sc, query, e, 0, topK)
	return hits, e.tokens, err
}

// Save stores a record in a scope and indexes it, refreshed so that the next turn finds it.
func (s *Service) Save(ctx context.Context, sc domain.MemoryScope, text string, src domain.MemorySource) (*domain.MemoryRecord, error) {
	if err := checkScope(sc); err != nil {
		return nil, err
	}
	var fe fieldErrs
	text = fe.text("text", &text)
	if err := fe.err(); err != nil {
		return nil, err
	}
	e, err := s.embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return s.save(ctx, sc, text, src, e, 0)
}

// Enqueue queues an extraction job: one SQS send. A user's jobs share a message group, so that
// on a FIFO queue they run one after another and each sees what the one before saved.
func (s *Service) Enqueue(ctx context.Context, job domain.MemoryExtractJob) error {
	if err := checkScope(job.Scope); err != nil {
		return err
	}
	if s.d.Queue == nil {
		return errors.New("memory: no extraction queue")
	}
	job.User, job.Reply = clip(job.User, domain.MaxExtractTextLength), clip(job.Reply, domain.MaxExtractTextLength)
	b, err := json.Marshal(job)
	if err != nil {
		return fmt.Errorf("encode extraction job: %w", err)
	}
	if err := s.d.Queue.Send(ctx, string(b), UserKey(job.Scope.Company, job.Scope.UserID)); err != nil {
		return fmt.Errorf("queue extraction: %w", err)
	}
	return nil
}

// clip is s cut to at most n characters.
func clip(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
