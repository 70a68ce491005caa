package memory

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
)

// recordFile is the file name a record's chunk carries in the vector index.
const recordFile = "memory"

// embedded is texts embedded with the deployment's default embedder, and the index of its space.
type embedded struct {
	model  string
	dims   int
	index  string
	vecs   [][]float32
	tokens int
}

// countedEmbedder is an embedder that says how many tokens the provider counted (the
// shared/embeddings providers); another is counted with its Tokens.
type countedEmbedder interface {
	EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error)
}

// embed embeds texts with the default embedder (one call) and ensures its index (a request the
// first time per process only).
func (s *Service) embed(ctx context.Context, texts []string) (*embedded, error) {
	if s.d.Embedders == nil || s.d.Index == nil {
		return nil, errors.New("memory: records need an embedder and a vector index")
	}
	emb, err := s.d.Embedders.Embedder(ctx, domain.Embedding{})
	if err != nil {
		return nil, fmt.Errorf("memory embedder: %w", err)
	}
	e := &embedded{model: emb.Name(), dims: emb.Dimensions()}
	if c, ok := emb.(countedEmbedder); ok {
		e.vecs, e.tokens, err = c.EmbedCounted(ctx, texts)
	} else {
		e.vecs, err = emb.Embed(ctx, texts)
		for _, t := range texts {
			k := emb.Tokens(t)
			if m := emb.MaxTokens(); m > 0 {
				k = min(k, m)
			}
			e.tokens += k
		}
	}
	if err != nil {
		return nil, fmt.Errorf("embed memory: %w", err)
	}
	if len(e.vecs) != len(texts) {
		return nil, fmt.Errorf("embed memory: %d vectors for %d texts", len(e.vecs), len(texts))
	}
	if e.index, err = s.d.Index.EnsureIndex(ctx, e.model, e.dims); err != nil {
		return nil, fmt.Errorf("memory index of %s/%d: %w", e.model, e.dims, err)
	}
	return e, nil
}

// chunk is a record as the vector index holds it.
func chunk(r *domain.MemoryRecord, vec []float32) domain.Chunk {
	return domain.Chunk{KBID: UserKey(r.Company, r.UserID), Company: r.Company, FileID: r.ID, FileName: recordFile,
		Text: r.Text, Tags: []string{AgentTag(r.AgentID)}, Vector: vec}
}

// index puts r's vector and refreshes the index, so that the next turn finds it. A failed
// refresh is no error: the index refreshes itself within a second anyway.
func (s *Service) index(ctx context.Context, index string, r *domain.MemoryRecord, vec []float32) error {
	if err := s.d.Index.Put(ctx, index, []domain.Chunk{chunk(r, vec)}); err != nil {
		return fmt.Errorf("index memory record %s: %w", r.ID, err)
	}
	_ = s.d.Index.Refresh(ctx, index)
	return nil
}

// save stores the record of text i of e in sc, then its vector; a vector that cannot be put
// takes the record back, so that nothing is stored that recall would never find.
func (s *Service) save(ctx context.Context, sc domain.MemoryScope, text string, src domain.MemorySource, e *embedded, i int) (*domain.MemoryRecord, error) {
	now := s.d.Now().UTC()
	r := &domain.MemoryRecord{ID: s.d.NewID(), Company: sc.Company, UserID: sc.UserID, AgentID: sc.AgentID, Text: text,
		Source: src, EmbeddingModel: e.model, Dimensions: e.dims, CreatedAt: now, UpdatedAt: now}
	if err := s.d.Store.CreateMemoryRecord(ctx, r); err != nil {
		return nil, fmt.Errorf("create memory record: %w", err)
	}
	if err := s.index(ctx, e.index, r, e.vecs[i]); err != nil {
		if derr := s.d.Store.DeleteMemoryRecord(ctx, r); derr != nil {
			return nil, errors.Join(err, fmt.Errorf("take back memory record %s: %w", r.ID, derr))
		}
		return nil, err
	}
	return r, nil
}

// search finds the topK records of sc nearest vector i of e: one k-NN search, filtered on the
// user's key, the company and the agent's tag inside the query.
func (s *Service) search(ctx context.Context, sc domain.MemoryScope, text string, e *embedded, i, topK int) ([]domain.MemoryHit, error) {
	hits, err := s.d.Index.Search(ctx, e.index, domain.VectorQuery{KBIDs: []string{UserKey(sc.Company, sc.UserID)},
		Company: sc.Company, Tags: []string{AgentTag(sc.AgentID)}, Vector: e.vecs[i], Text: text, TopK: topK,
		Strategy: domain.StrategyDense})
	if err != nil {
		return nil, fmt.Errorf("search memory: %w", err)
	}
	out := make([]domain.MemoryHit, 0, len(hits))
	for _, h := range hits {
		out = append(out, domain.MemoryHit{Score: h.Score, Record: domain.MemoryRecord{ID: h.FileID, Company: sc.Company,
			UserID: sc.UserID, AgentID: sc.AgentID, Text: h.Text, EmbeddingModel: e.model, Dimensions: e.dims}})
	}
	return out, nil
}

// recordIndex is the index that holds r's vector.
func (s *Service) recordIndex(ctx context.Context, r *domain.MemoryRecord) (string, error) {
	if r.EmbeddingModel == "" || r.Dimensions < 1 {
		return s.d.Index.AllIndices(), nil
	}
	return s.d.Index.EnsureIndex(ctx, r.EmbeddingModel, r.Dimensions)
}

// CreateRecord stores a record written by p's key and indexes its vector (memory:write).
func (s *Service) CreateRecord(ctx context.Context, p domain.Principal, in RecordInput) (*domain.MemoryRecord, error) {
	if !p.Can(domain.ScopeMemoryWrite) {
		return nil, domain.ErrPermission
	}
	var e fieldErrs
	user := e.userID("user_id", in.UserID)
	agent := e.agentID("agent_id", in.AgentID)
	text := e.text("text", in.Text)
	if err := e.err(); err != nil {
		return nil, err
	}
	return s.Save(ctx, domain.MemoryScope{Company: p.Company, UserID: user, AgentID: agent}, text,
		domain.MemorySource{Type: domain.MemorySourceAPI, KeyID: p.KeyID})
}

// GetRecord is a record of p's company (memory:read; another company's is not found).
func (s *Service) GetRecord(ctx context.Context, p domain.Principal, id string) (*domain.MemoryRecord, error) {
	if !p.Can(domain.ScopeMemoryRead) {
		return nil, domain.ErrPermission
	}
	return s.record(ctx, p.Company, id)
}

// record reads a record of company.
func (s *Service) record(ctx context.Context, company, id string) (*domain.MemoryRecord, error) {
	r, err := s.d.Store.GetMemoryRecord(ctx, company, id)
	if err != nil {
		return nil, err
	}
	if r.Company != company {
		return nil, domain.Errorf(domain.KindNotFound, "memory record %s not found", id)
	}
	return r, nil
}

// ListRecords is a page of p's company's records that f selects and whether more follow
// (memory:read).
func (s *Service) ListRecords(ctx context.Context, p domain.Principal, f domain.MemoryFilter, offset, limit int) ([]*domain.MemoryRecord, bool, error) {
	if !p.Can(domain.ScopeMemoryRead) {
		return nil, false, domain.ErrPermission
	}
	if err := checkFilter(f); err != nil {
		return nil, false, err
	}
	return s.d.Store.ListMemoryRecords(ctx, p.Company, f, offset, limit)
}

// checkFilter refuses a filter no item can match.
func checkFilter(f domain.MemoryFilter) error {
	var e fieldErrs
	if f.UserID != "" && !domain.ValidUserID(f.UserID) {
		e.add("user_id", "%s", domain.UserIDRule)
	}
	if f.AgentSet && !validAgentID(f.AgentID) {
		e.add("agent_id", "%s", agentIDRule)
	}
	return e.err()
}

// UpdateRecord replaces a record's text and re-embeds it (memory:write).
func (s *Service) UpdateRecord(ctx context.Context, p domain.Principal, id string, in RecordUpdate) (*domain.MemoryRecord, error) {
	if !p.Can(domain.ScopeMemoryWrite) {
		return nil, domain.ErrPermission
	}
	var fe fieldErrs
	text := fe.text("text", in.Text)
	if err := fe.err(); err != nil {
		return nil, err
	}
	prev, err := s.record(ctx, p.Company, id)
	if err != nil {
		return nil, err
	}
	e, err := s.embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	r := *prev
	r.Text, r.Source, r.EmbeddingModel, r.Dimensions = text, domain.MemorySource{Type: domain.MemorySourceAPI, KeyID: p.KeyID}, e.model, e.dims
	r.UpdatedAt = s.d.Now().UTC()
	if err := s.d.Store.UpdateMemoryRecord(ctx, &r, prev); err != nil {
		return nil, fmt.Errorf("update memory record %s: %w", id, err)
	}
	if err := s.index(ctx, e.index, &r, e.vecs[0]); err != nil {
		return nil, err
	}
	if prev.EmbeddingModel != r.EmbeddingModel || prev.Dimensions != r.Dimensions {
		// The default embedder changed since: the old space's vector would still be found there.
		old, err := s.recordIndex(ctx, prev)
		if err != nil {
			return nil, err
		}
		if _, err := s.d.Index.DeleteFile(ctx, old, prev.Company, UserKey(prev.Company, prev.UserID), prev.ID); err != nil {
			return nil, fmt.Errorf("delete the old vector of memory record %s: %w", id, err)
		}
	}
	return &r, nil
}

// DeleteRecord deletes a record's vector, then the record (memory:write): a failure between
// leaves a record recall no longer finds, which a retry deletes.
func (s *Service) DeleteRecord(ctx context.Context, p domain.Principal, id string) error {
	if !p.Can(domain.ScopeMemoryWrite) {
		return domain.ErrPermission
	}
	r, err := s.record(ctx, p.Company, id)
	if err != nil {
		return err
	}
	index, err := s.recordIndex(ctx, r)
	if err != nil {
		return err
	}
	if _, err := s.d.Index.DeleteFile(ctx, index, r.Company, UserKey(r.Company, r.UserID), r.ID); err != nil {
		return fmt.Errorf("delete the vector of memory record %s: %w", id, err)
	}
	if err := s.d.Store.DeleteMemoryRecord(ctx, r); err != nil {
		return fmt.Errorf("delete memory record %s: %w", id, err)
	}
	return nil
}

// Forget deletes every record (vectors first) and block of a user of p's company and says how
// many of each it deleted (memory:write); a user with none is 0, 0.
func (s *Service) Forget(ctx context.Context, p domain.Principal, userID string) (records, blocks int, err error) {
	if !p.Can(domain.ScopeMemoryWrite) {
		return 0, 0, domain.ErrPermission
	}
	var e fieldErrs
	e.userID("user_id", &userID)
	if err := e.err(); err != nil {
		return 0, 0, err
	}
	if _, err := s.d.Index.DeleteKB(ctx, s.d.Index.AllIndices(), p.Company, UserKey(p.Company, userID)); err != nil {
		return 0, 0, fmt.Errorf("delete the memory vectors of a user: %w", err)
	}
	records, blocks, err = s.d.Store.ForgetMemoryUser(ctx, p.Company, userID)
	if err != nil {
		return 0, 0, fmt.Errorf("forget a user's memory: %w", err)
	}
	return records, blocks, nil
}
