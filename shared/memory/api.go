package memory

import (
	"context"

	"github.com/agentorch/agentorch/shared/domain"
)

// RecordInput is a record to create (POST /api/v1/memory/records/); api decodes it. A nil field
// was not sent.
type RecordInput struct {
	UserID  *string `json:"user_id"`
	AgentID *string `json:"agent_id"`
	Text    *string `json:"text"`
}

// RecordUpdate is a record's change (PATCH /api/v1/memory/records/{id}/): its text, re-embedded.
type RecordUpdate struct {
	Text *string `json:"text"`
}

// BlockInput is a block to create (POST /api/v1/memory/blocks/); Limit nil is DefaultBlockLimit.
type BlockInput struct {
	UserID      *string `json:"user_id"`
	AgentID     *string `json:"agent_id"`
	Label       *string `json:"label"`
	Value       *string `json:"value"`
	Description *string `json:"description"`
	Limit       *int    `json:"limit"`
}

// BlockUpdate is a block's change (PATCH /api/v1/memory/blocks/{id}/): the fields sent.
type BlockUpdate struct {
	Value       *string `json:"value"`
	Description *string `json:"description"`
	Limit       *int    `json:"limit"`
}

// CreateRecord stores a record written by p's key and indexes its vector (memory:write).
func (s *Service) CreateRecord(ctx context.Context, p domain.Principal, in RecordInput) (*domain.MemoryRecord, error) {
	return nil, errUnimplemented
}

// GetRecord is a record of p's company (memory:read; another company's is not found).
func (s *Service) GetRecord(ctx context.Context, p domain.Principal, id string) (*domain.MemoryRecord, error) {
	return nil, errUnimplemented
}

// ListRecords is a page of p's company's records that f selects, oldest first, and whether more
// follow (memory:read).
func (s *Service) ListRecords(ctx context.Context, p domain.Principal, f domain.MemoryFilter, offset, limit int) ([]*domain.MemoryRecord, bool, error) {
	return nil, false, errUnimplemented
}

// UpdateRecord replaces a record's text and re-embeds it (memory:write).
func (s *Service) UpdateRecord(ctx context.Context, p domain.Principal, id string, in RecordUpdate) (*domain.MemoryRecord, error) {
	return nil, errUnimplemented
}

// DeleteRecord deletes a record and its vector (memory:write).
func (s *Service) DeleteRecord(ctx context.Context, p domain.Principal, id string) error {
	return errUnimplemented
}

// CreateBlock stores a block written by p's key (memory:write); its label is unique in its
// scope (409) and a scope holds at most domain.MaxMemoryBlocks (400 on label).
func (s *Service) CreateBlock(ctx context.Context, p domain.Principal, in BlockInput) (*domain.MemoryBlock, error) {
	return nil, errUnimplemented
}

// GetBlock is a block of p's company (memory:read).
func (s *Service) GetBlock(ctx context.Context, p domain.Principal, id string) (*domain.MemoryBlock, error) {
	return nil, errUnimplemented
}

// ListBlocks is a page of p's company's blocks that f selects, oldest first, and whether more
// follow (memory:read).
func (s *Service) ListBlocks(ctx context.Context, p domain.Principal, f domain.MemoryFilter, offset, limit int) ([]*domain.MemoryBlock, bool, error) {
	return nil, false, errUnimplemented
}

// UpdateBlock changes a block's value, description or limit (memory:write).
func (s *Service) UpdateBlock(ctx context.Context, p domain.Principal, id string, in BlockUpdate) (*domain.MemoryBlock, error) {
	return nil, errUnimplemented
}

// DeleteBlock deletes a block (memory:write).
func (s *Service) DeleteBlock(ctx context.Context, p domain.Principal, id string) error {
	return errUnimplemented
}

// Forget deletes every record (vectors first) and block of a user of p's company and says how
// many of each it deleted (memory:write); a user with none is 0, 0.
func (s *Service) Forget(ctx context.Context, p domain.Principal, userID string) (records, blocks int, err error) {
	return 0, 0, errUnimplemented
}
