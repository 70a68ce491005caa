package memory

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

// editTries is how often EditBlock reads and writes again when another write to the block
// came between its read and its write.
const editTries = 3

// CreateBlock stores a block written by p's key (memory:write); its label is unique in its
// scope (409) and a scope holds at most domain.MaxMemoryBlocks (400 on label).
func (s *Service) CreateBlock(ctx context.Context, p domain.Principal, in BlockInput) (*domain.MemoryBlock, error) {
	if !p.Can(domain.ScopeMemoryWrite) {
		return nil, domain.ErrPermission
	}
	var e fieldErrs
	sc := domain.MemoryScope{Company: p.Company, UserID: e.userID("user_id", in.UserID), AgentID: e.agentID("agent_id", in.AgentID)}
	label := e.label("label", in.Label)
	limit := e.limit("limit", in.Limit, domain.DefaultBlockLimit)
	desc := e.description("description", in.Description, "")
	value := ""
	if in.Value != nil {
		value = *in.Value
		if len(e) == 0 {
			e.value("value", value, limit)
		}
	}
	if err := e.err(); err != nil {
		return nil, err
	}
	existing, err := s.d.Store.ScopeMemoryBlocks(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("read memory blocks: %w", err)
	}
	if err := roomFor(existing, label); err != nil {
		return nil, err
	}
	now := s.d.Now().UTC()
	b := &domain.MemoryBlock{ID: s.d.NewID(), Company: sc.Company, UserID: sc.UserID, AgentID: sc.AgentID, Label: label,
		Description: desc, Value: value, Limit: limit, Source: domain.MemorySource{Type: domain.MemorySourceAPI, KeyID: p.KeyID},
		CreatedAt: now, UpdatedAt: now}
	if err := s.d.Store.CreateMemoryBlock(ctx, b); err != nil {
		if errors.Is(err, domain.ErrConflict) {
			return nil, labelTaken(label, err)
		}
		return nil, fmt.Errorf("create memory block: %w", err)
	}
	return b, nil
}

// roomFor says whether a scope holding existing may take a block labelled label: a conflict
// when the label is taken, a 400 on label when the scope is full.
func roomFor(existing []*domain.MemoryBlock, label string) error {
	for _, b := range existing {
		if b.Label == label {
			return labelTaken(label, nil)
		}
	}
	if len(existing) >= domain.MaxMemoryBlocks {
		return domain.Invalid([]domain.FieldError{{Field: "label", Message: fmt.Sprintf(
			"the memory holds %d blocks already, the most one agent's memory of a user may hold", len(existing))}})
	}
	return nil
}

func labelTaken(label string, err error) error {
	return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("a block labelled %s exists in this memory already", label), Err: err}
}

// GetBlock is a block of p's company (memory:read).
func (s *Service) GetBlock(ctx context.Context, p domain.Principal, id string) (*domain.MemoryBlock, error) {
	if !p.Can(domain.ScopeMemoryRead) {
		return nil, domain.ErrPermission
	}
	return s.block(ctx, p.Company, id)
}

// block reads a block of company.
func (s *Service) block(ctx context.Context, company, id string) (*domain.MemoryBlock, error) {
	b, err := s.d.Store.GetMemoryBlock(ctx, company, id)
	if err != nil {
		return nil, err
	}
	if b.Company != company {
		return nil, domain.Errorf(domain.KindNotFound, "memory block %s not found", id)
	}
	return b, nil
}

// ListBlocks is a page of p's company's blocks that f selects and whether more follow
// (memory:read).
func (s *Service) ListBlocks(ctx context.Context, p domain.Principal, f domain.MemoryFilter, offset, limit int) ([]*domain.MemoryBlock, bool, error) {
	if !p.Can(domain.ScopeMemoryRead) {
		return nil, false, domain.ErrPermission
	}
	if err := checkFilter(f); err != nil {
		return nil, false, err
	}
	return s.d.Store.ListMemoryBlocks(ctx, p.Company, f, offset, limit)
}

// UpdateBlock changes a block's value, description or limit (memory:write); the value must fit
// the limit either way.
func (s *Service) UpdateBlock(ctx context.Context, p domain.Principal, id string, in BlockUpdate) (*domain.MemoryBlock, error) {
	if !p.Can(domain.ScopeMemoryWrite) {
		return nil, domain.ErrPermission
	}
	var e fieldErrs
	e.limit("limit", in.Limit, 0)
	e.description("description", in.Description, "")
	if err := e.err(); err != nil {
		return nil, err
	}
	prev, err := s.block(ctx, p.Company, id)
	if err != nil {
		return nil, err
	}
	b := *prev
	if in.Value != nil {
		b.Value = *in.Value
	}
	if in.Description != nil {
		b.Description = *in.Description
	}
	if in.Limit != nil {
		b.Limit = *in.Limit
	}
	field := "value"
	if in.Value == nil {
		field = "limit" // the limit was lowered under the value
	}
	e.value(field, b.Value, b.Limit)
	if err := e.err(); err != nil {
		return nil, err
	}
	b.Source = domain.MemorySource{Type: domain.MemorySourceAPI, KeyID: p.KeyID}
	b.UpdatedAt = s.d.Now().UTC()
	if err := s.d.Store.UpdateMemoryBlock(ctx, &b, prev); err != nil {
		return nil, fmt.Errorf("update memory block %s: %w", id, err)
	}
	return &b, nil
}

// DeleteBlock deletes a block (memory:write).
func (s *Service) DeleteBlock(ctx context.Context, p domain.Principal, id string) error {
	if !p.Can(domain.ScopeMemoryWrite) {
		return domain.ErrPermission
	}
	b, err := s.block(ctx, p.Company, id)
	if err != nil {
		return err
	}
	if err := s.d.Store.DeleteMemoryBlock(ctx, b); err != nil {
		return fmt.Errorf("delete memory block %s: %w", id, err)
	}
	return nil
}

// Blocks reads every block of a scope, label order: one Query, the recall path. The engine
// checks the caller's scopes; the service trusts sc.
func (s *Service) Blocks(ctx context.Context, sc domain.MemoryScope) ([]*domain.MemoryBlock, error) {
	if err := checkScope(sc); err != nil {
		return nil, err
	}
	return s.d.Store.ScopeMemoryBlocks(ctx, sc)
}

// overLimit is an edit that would make a block longer than its limit: a 400 on value whose
// message tells the model (a tool's error result) to condense the block.
func overLimit(label string, n, limit int) error {
	return &domain.Error{Kind: domain.KindInvalid, Message: fmt.Sprintf(
		"memory block %s would hold %d characters, over its limit of %d: nothing was written; condense the block and try again", label, n, limit),
		Fields: []domain.FieldError{{Field: "value", Message: fmt.Sprintf("is %d characters, over the block's limit of %d", n, limit)}}}
}

// EditBlock rewrites the block spec names in a scope with edit (given its value, "" when the
// block does not exist yet, which it then creates from spec); a value over the block's limit is
// invalid (a 400 on value telling to condense) and stores nothing. A write that meets another between its read and
// its write reads again and calls edit again.
func (s *Service) EditBlock(ctx context.Context, sc domain.MemoryScope, spec domain.MemoryBlockSpec, src domain.MemorySource,
	edit func(old string) (string, error)) (*domain.MemoryBlock, error) {
	if err := checkScope(sc); err != nil {
		return nil, err
	}
	var e fieldErrs
	e.label("label", &spec.Label)
	limit := spec.Limit
	if limit == 0 {
		limit = domain.DefaultBlockLimit
	}
	e.limit("limit", &limit, 0)
	if err := e.err(); err != nil {
		return nil, err
	}
	var err error
	for range editTries {
		var b *domain.MemoryBlock
		if b, err = s.editOnce(ctx, sc, spec.Label, spec.Description, limit, src, edit); err == nil || !errors.Is(err, domain.ErrConflict) {
			return b, err
		}
	}
	return nil, err
}

// editOnce is one read and one conditional write of EditBlock.
func (s *Service) editOnce(ctx context.Context, sc domain.MemoryScope, label, desc string, limit int, src domain.MemorySource,
	edit func(old string) (string, error)) (*domain.MemoryBlock, error) {
	blocks, err := s.d.Store.ScopeMemoryBlocks(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("read memory blocks: %w", err)
	}
	var prev *domain.MemoryBlock
	for _, b := range blocks {
		if b.Label == label {
			prev = b
		}
	}
	now := s.d.Now().UTC()
	var b domain.MemoryBlock
	if prev != nil {
		b = *prev
	} else {
		if err := roomFor(blocks, label); err != nil {
			return nil, err
		}
		b = domain.MemoryBlock{ID: s.d.NewID(), Company: sc.Company, UserID: sc.UserID, AgentID: sc.AgentID, Label: label,
			Description: desc, Limit: limit, CreatedAt: now}
	}
	v, err := edit(b.Value)
	if err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(v); n > b.Limit {
		return nil, overLimit(label, n, b.Limit)
	}
	b.Value, b.Source, b.UpdatedAt = v, src, now
	if prev == nil {
		err = s.d.Store.CreateMemoryBlock(ctx, &b)
	} else {
		err = s.d.Store.UpdateMemoryBlock(ctx, &b, prev)
	}
	if err != nil {
		return nil, fmt.Errorf("write memory block %s: %w", label, err)
	}
	return &b, nil
}
