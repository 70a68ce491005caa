// Package mem adds memory across sessions (shared/memory, docs/memory.md) to the core: its
// records and blocks in the table, its record vectors in the knowledge feature's OpenSearch
// indices (through the embedders app/kb builds), and its extraction queue. It builds the memory
// group and the extraction function's processor; run gives its service to the engine.
package mem

import (
	"context"
	"fmt"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/kb"
	"github.com/agentorch/agentorch/shared/app/llm"
	"github.com/agentorch/agentorch/shared/memory"
	"github.com/agentorch/agentorch/shared/sqs"
)

type serviceKey struct{}

// Service is the memory feature of the application, built on first use (no network call) and
// the same service, or the same error, on every use: the store, the vector index and the
// embedders the knowledge feature uses, and MEMORY_QUEUE_URL's queue where it is set (the
// functions that enqueue extraction: runtime, stream, worker). It resolves no model: the API
// and the engine's recall, tools and enqueue need none, and extraction's processor (Extract)
// adds them, so that the memory function links no model provider.
func Service(a *core.App) (*memory.Service, error) {
	return core.Shared(a, serviceKey{}, func() (*memory.Service, error) {
		d, err := deps(a)
		if err != nil {
			return nil, err
		}
		return memory.New(d), nil
	})
}

// deps are the feature's adapters but the models.
func deps(a *core.App) (memory.Deps, error) {
	index, err := kb.Index(a)
	if err != nil {
		return memory.Deps{}, fmt.Errorf("memory: %w", err)
	}
	emb, err := kb.Embedders(a)
	if err != nil {
		return memory.Deps{}, fmt.Errorf("memory: %w", err)
	}
	d := memory.Deps{Store: a.Store, Index: index, Embedders: emb}
	if a.Config.MemoryQueueURL != "" {
		d.Queue = sqs.NewQueue(sqs.NewClient(a.AWS, a.Config.SQSEndpoint), a.Config.MemoryQueueURL)
	}
	return d, nil
}

// Group builds the memory group: records and blocks of end users, and forgetting one user.
func Group(a *core.App) (*api.Group, error) {
	svc, err := Service(a)
	if err != nil {
		return nil, err
	}
	return api.NewMemory(svc, a.Options()), nil
}

type extractKey struct{}

// Extract builds the memory extraction function's processor: one queued job per message
// (memory.Service.ProcessJob), on Service's adapters and the model providers (llm.Models),
// built once. A job that fails for a reason that may pass is an error, for the queue to deliver
// it again.
func Extract(a *core.App) (func(ctx context.Context, body string) error, error) {
	svc, err := core.Shared(a, extractKey{}, func() (*memory.Service, error) {
		d, err := deps(a)
		if err != nil {
			return nil, err
		}
		d.Models = llm.Models(a)
		return memory.New(d), nil
	})
	if err != nil {
		return nil, err
	}
	return svc.ProcessJob, nil
}
