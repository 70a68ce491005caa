package memory

import (
	"context"
	"errors"

	"github.com/agentorch/agentorch/shared/domain"
)

// errUnimplemented stands for the logic until it lands.
var errUnimplemented = errors.New("memory: not implemented yet")

// Blocks reads every block of a scope, label order: one Query, the recall path. The engine
// checks the caller's scopes; the service trusts sc.
func (s *Service) Blocks(ctx context.Context, sc domain.MemoryScope) ([]*domain.MemoryBlock, error) {
	return nil, errUnimplemented
}

// Search finds the topK records of a scope nearest query's meaning, best first, with one k-NN
// search, and says how many tokens embedding the query took.
func (s *Service) Search(ctx context.Context, sc domain.MemoryScope, query string, topK int) ([]domain.MemoryHit, int, error) {
	return nil, 0, errUnimplemented
}

// Save stores a record in a scope and indexes it, refreshed so that the next turn finds it.
func (s *Service) Save(ctx context.Context, sc domain.MemoryScope, text string, src domain.MemorySource) (*domain.MemoryRecord, error) {
	return nil, errUnimplemented
}

// EditBlock rewrites the block spec names in a scope with edit (given its value, "" when the
// block does not exist yet, which it then creates from spec); a value over the block's limit is
// invalid and stores nothing.
func (s *Service) EditBlock(ctx context.Context, sc domain.MemoryScope, spec domain.MemoryBlockSpec, src domain.MemorySource,
	edit func(old string) (string, error)) (*domain.MemoryBlock, error) {
	return nil, errUnimplemented
}

// Enqueue queues an extraction job: one SQS send.
func (s *Service) Enqueue(ctx context.Context, job domain.MemoryExtractJob) error {
	return errUnimplemented
}

// ProcessJob runs one queued extraction (the memoryextract function's processor): the model
// reads the turn, and each fact not already remembered is saved. A bad answer saves nothing and
// is no error; transient failures are errors, for the queue to deliver the job again.
func (s *Service) ProcessJob(ctx context.Context, body string) error {
	return errUnimplemented
}
