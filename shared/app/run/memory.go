package run

import (
	"context"
	"fmt"

	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/mem"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/memory"
)

// memories is the engine's memory and the sessions' extraction queue through the memory
// feature (mem.Service), built on first use as retrieval is: executions without memory never
// build it.
type memories struct{ a *core.App }

func (m memories) service() (*memory.Service, error) {
	svc, err := mem.Service(m.a)
	if err != nil {
		return nil, fmt.Errorf("memory feature unavailable: %w", err)
	}
	return svc, nil
}

// Blocks implements engine.Memory.
func (m memories) Blocks(ctx context.Context, sc domain.MemoryScope) ([]*domain.MemoryBlock, error) {
	svc, err := m.service()
	if err != nil {
		return nil, err
	}
	return svc.Blocks(ctx, sc)
}

// Search implements engine.Memory.
func (m memories) Search(ctx context.Context, sc domain.MemoryScope, query string, topK int) ([]domain.MemoryHit, int, error) {
	svc, err := m.service()
	if err != nil {
		return nil, 0, err
	}
	return svc.Search(ctx, sc, query, topK)
}

// Save implements engine.Memory.
func (m memories) Save(ctx context.Context, sc domain.MemoryScope, text string, src domain.MemorySource) (*domain.MemoryRecord, error) {
	svc, err := m.service()
	if err != nil {
		return nil, err
	}
	return svc.Save(ctx, sc, text, src)
}

// EditBlock implements engine.Memory.
func (m memories) EditBlock(ctx context.Context, sc domain.MemoryScope, spec domain.MemoryBlockSpec, src domain.MemorySource,
	edit func(old string) (string, error)) (*domain.MemoryBlock, error) {
	svc, err := m.service()
	if err != nil {
		return nil, err
	}
	return svc.EditBlock(ctx, sc, spec, src, edit)
}

// Enqueue implements sessions.MemoryQueue: one SQS send on MEMORY_QUEUE_URL's queue.
func (m memories) Enqueue(ctx context.Context, job domain.MemoryExtractJob) error {
	svc, err := m.service()
	if err != nil {
		return err
	}
	return svc.Enqueue(ctx, job)
}
