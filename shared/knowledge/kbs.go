package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
)

// KBFilter selects knowledge bases of a list; empty fields select all. Status must be one of
// domain.KBStatuses and Engine opensearch (400 naming status / processing_engine otherwise).
type KBFilter struct {
	Status, Engine string
	Offset, Limit  int
}

// Bounds of a knowledge base's body.
const (
	// MaxKBDescriptionLength bounds a knowledge base's description in characters.
	MaxKBDescriptionLength = 2000
	// MaxKBCollections bounds selected_collections.
	MaxKBCollections = 100
)

// CreateKB creates a knowledge base and queues its first run (status pending; 201). Every
// check comes before the first write, so refused input stores nothing: the ids of Collections
// (selected_collections, alias collection_ids) and Datasources (selected_datasources) must name
// the caller company's collections and files (400 naming selected_collections.N otherwise), the
// Embedding is resolved by the Embedders, and the Chunking is filled with the defaults that fit
// the embedder and validated by the splitter.
func (s *Service) CreateKB(ctx context.Context, p domain.Principal, kbIn KBInput) (*KB, error) {
	in := parseKB(kbIn)
	var colls []*domain.Collection
	candidates := slices.Clone(in.files)
	for i, id := range in.collections {
		c, err := s.Collection(ctx, p, id)
		if errors.Is(err, domain.ErrNotFound) {
			in.add(fmt.Sprintf("%s.%d", in.collField, i), "collection %s not found", domain.Clip(id, 40))
			continue
		}
		if err != nil {
			return nil, err
		}
		colls = append(colls, c)
		candidates = append(candidates, c.FileIDs...)
	}
	byID, err := s.FilesOf(ctx, p.Company, candidates)
	if err != nil {
		return nil, err
	}
	var ids []string // the files of the knowledge base, in order, once each
	seen := map[string]bool{}
	addID := func(id string) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, c := range colls {
		for _, fid := range c.FileIDs {
			if byID[fid] != nil {
				addID(fid)
			}
		}
	}
	for i, id := range in.files {
		if byID[id] == nil {
			in.add(fmt.Sprintf("selected_datasources.%d", i), "file %s not found", domain.Clip(id, 40))
			continue
		}
		addID(id)
	}
	if len(ids) > s.l.MaxDatasources {
		in.add(in.collField, "the knowledge base would hold %d files; at most %d are allowed", len(ids), s.l.MaxDatasources)
	}

	emb, eff, err := s.resolveEmbedding(ctx, in)
	if err != nil {
		return nil, err
	}
	maxTokens := 0
	if emb != nil {
		maxTokens = emb.MaxTokens()
	}
	chunking := in.chunking(maxTokens)
	if err := s.checkChunking(chunking, in); err != nil {
		return nil, err
	}
	if len(in.errs) > 0 {
		return nil, domain.Invalid(in.errs)
	}
	if s.d.Queue == nil {
		return nil, errNoQueue()
	}
	index, err := s.d.Index.EnsureIndex(ctx, emb.Name(), emb.Dimensions())
	if err != nil {
		return nil, fmt.Errorf("vector index of %s/%d: %w", emb.Name(), emb.Dimensions(), err)
	}

	now := s.now()
	deadline := now.Add(s.l.RunDeadline)
	kb := &domain.KnowledgeBase{ID: uuid.NewString(), Company: p.Company, Owner: p.Owner, Name: in.name,
		Description: in.description, Engine: domain.EngineOpenSearch, Collections: in.collections, Files: in.files,
		Chunking: chunking, Embedding: eff, Index: index, Status: domain.KBPending,
		Sources: make(map[string]*domain.Datasource, len(ids)), RunID: uuid.NewString(), RunStarted: &now,
		RunDeadline: &deadline, StatusChanged: now, CreatedAt: now, UpdatedAt: now}
	for _, id := range ids {
		kb.Sources[id] = &domain.Datasource{FileID: id, Name: byID[id].Name, Status: domain.IngestPending}
	}
	if err := s.d.Store.PutKB(ctx, kb); err != nil {
		return nil, fmt.Errorf("create knowledge base: %w", err)
	}
	if err := s.send(ctx, startJob(kb)); err != nil {
		// Without its job the knowledge base would stay pending: take it back.
		if derr := s.d.Store.DeleteKB(ctx, kb.ID); derr != nil {
			return nil, errors.Join(err, fmt.Errorf("take back knowledge base %s: %w", kb.ID, derr))
		}
		return nil, err
	}
	return &KB{KnowledgeBase: presentKB(kb), SourceFiles: byID}, nil
}

// resolveEmbedding resolves embedding_config and builds its embedder (the default chunking
// depends on how much of a text it reads). Field errors join in's; the embedder is nil then.
func (s *Service) resolveEmbedding(ctx context.Context, in *kbInput) (Embedder, domain.Embedding, error) {
	if in.embeddingBad {
		return nil, domain.Embedding{}, nil
	}
	eff, fields := s.d.Embedders.Resolve(in.embedding)
	if len(fields) > 0 {
		in.errs = append(in.errs, fields...)
		return nil, eff, nil
	}
	emb, err := s.d.Embedders.Embedder(ctx, eff)
	var de *domain.Error
	if errors.As(err, &de) && de.Kind == domain.KindInvalid {
		in.errs = append(in.errs, de.Fields...)
		if len(de.Fields) == 0 {
			in.add("embedding_config", "%s", de.Message)
		}
		return nil, eff, nil
	}
	if err != nil {
		return nil, eff, fmt.Errorf("embedder of %s/%s: %w", eff.Provider, eff.Model, err)
	}
	return emb, eff, nil
}

// checkChunking validates a chunking_strategy with the splitter the ingestion will use (its
// field errors come back under chunking_strategy.).
func (s *Service) checkChunking(c domain.Chunking, in *kbInput) error {
	if in.chunkingBad {
		return nil
	}
	if s.d.NewSplitter == nil {
		return domain.Wrap(domain.KindInternal, errors.New("knowledge: no splitter configured (Deps.NewSplitter)"), domain.MsgInternal)
	}
	_, err := s.d.NewSplitter(c)
	var de *domain.Error
	if errors.As(err, &de) && de.Kind == domain.KindInvalid {
		for _, f := range de.Fields {
			in.add(joinField("chunking_strategy", f.Field), "%s", f.Message)
		}
		if len(de.Fields) == 0 {
			in.add("chunking_strategy", "%s", de.Message)
		}
		return nil
	}
	return err
}

func joinField(prefix, field string) string {
	if field == "" {
		return prefix
	}
	return prefix + "." + field
}

// ListKBs lists the company's knowledge bases, newest first, a page at a time: it reads the
// page's knowledge bases (those a status filter passes over too) and their files, not the
// company's whole lists; a run past its deadline is settled on the way.
func (s *Service) ListKBs(ctx context.Context, p domain.Principal, f KBFilter) ([]*KB, bool, error) {
	var bad []domain.FieldError
	if f.Status != "" && !slices.Contains(domain.KBStatuses, f.Status) {
		bad = append(bad, domain.FieldError{Field: "status", Message: fmt.Sprintf("must be one of %s, not %q", strings.Join(domain.KBStatuses, ", "), domain.Clip(f.Status, 40))})
	}
	if f.Engine != "" && f.Engine != domain.EngineOpenSearch {
		bad = append(bad, domain.FieldError{Field: "processing_engine", Message: fmt.Sprintf("must be %q, the one engine offered, not %q", domain.EngineOpenSearch, domain.Clip(f.Engine, 40))})
	}
	if len(bad) > 0 {
		return nil, false, domain.Invalid(bad)
	}
	kbs, more, err := library.Collect(ctx, func(ctx context.Context, after string, n int) ([]*domain.KnowledgeBase, string, error) {
		return s.d.Store.ListKBs(ctx, p.Company, after, n)
	}, func(kb *domain.KnowledgeBase) (bool, error) {
		settled, err := s.settle(ctx, kb)
		if errors.Is(err, domain.ErrNotFound) {
			return false, nil
		} else if err != nil {
			return false, err
		}
		*kb = *settled
		return f.Status == "" || kb.Status == f.Status, nil
	}, f.Offset, f.Limit)
	if err != nil {
		return nil, false, fmt.Errorf("list knowledge bases: %w", err)
	}
	files, err := s.sourceFiles(ctx, p.Company, kbs...)
	if err != nil {
		return nil, false, err
	}
	out := make([]*KB, len(kbs))
	for i, kb := range kbs {
		out[i] = &KB{KnowledgeBase: presentKB(kb), SourceFiles: files}
	}
	return out, more, nil
}

// GetKB returns a knowledge base of the caller's company in full.
func (s *Service) GetKB(ctx context.Context, p domain.Principal, id string) (*KB, error) {
	kb, files, err := s.readKB(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return &KB{KnowledgeBase: presentKB(kb), SourceFiles: files}, nil
}

// CheckStatus answers check_status. Updated (status_updated) is true when the knowledge base's status
// changed within the last StatusWindow (default 60 s): a client polling more often than that
// sees each change at least once, without the server keeping per-client state.
func (s *Service) CheckStatus(ctx context.Context, p domain.Principal, id string) (*KBStatus, error) {
	kb, files, err := s.readKB(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return &KBStatus{KB: &KB{KnowledgeBase: presentKB(kb), SourceFiles: files},
		Updated: s.now().Sub(kb.StatusChanged) <= s.l.StatusWindow}, nil
}

// readKB loads a knowledge base (settling an overdue run) and its files by id.
func (s *Service) readKB(ctx context.Context, p domain.Principal, id string) (*domain.KnowledgeBase, map[string]*domain.File, error) {
	kb, err := s.kb(ctx, p, id)
	if err != nil {
		return nil, nil, err
	}
	if kb, err = s.settle(ctx, kb); errors.Is(err, domain.ErrNotFound) {
		return nil, nil, notFound("Knowledge base")
	} else if err != nil {
		return nil, nil, err
	}
	files, err := s.sourceFiles(ctx, p.Company, kb)
	if err != nil {
		return nil, nil, err
	}
	return kb, files, nil
}

// SyncKB starts a new run of a knowledge base (202): the start job compares its files with the
// last run's by content hash. A run in progress is superseded: the new run id makes its
// workers' writes conflict, so they stop.
func (s *Service) SyncKB(ctx context.Context, p domain.Principal, id string) (*KB, error) {
	kb, err := s.kb(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if s.d.Queue == nil {
		return nil, errNoQueue()
	}
	for attempt := 0; ; attempt++ {
		prev := kb.RunID
		now := s.now()
		deadline := now.Add(s.l.RunDeadline)
		if kb.Status != domain.KBRunning {
			kb.StatusChanged = now
		}
		kb.RunID, kb.Status, kb.RunStarted, kb.RunDeadline, kb.Error, kb.UpdatedAt = uuid.NewString(), domain.KBRunning, &now, &deadline, "", now
		err = s.d.Store.UpdateKB(ctx, kb, prev)
		if err == nil {
			break
		}
		if errors.Is(err, domain.ErrConflict) && attempt >= 4 {
			return nil, errKeptChanging(err)
		}
		if !errors.Is(err, domain.ErrConflict) {
			return nil, s.notFoundIf(err)
		}
		if kb, err = s.kb(ctx, p, id); err != nil {
			return nil, err
		}
	}
	if err := s.send(ctx, startJob(kb)); err != nil {
		// The run cannot start: say so in the record (and to the company's webhooks) instead of
		// leaving it running.
		now := s.now()
		failed := *kb
		failed.Status, failed.Error, failed.RunDeadline, failed.StatusChanged, failed.UpdatedAt = domain.KBFailed, "the sync could not be queued; run sync again", nil, now, now
		uerr := s.d.Store.UpdateKB(ctx, &failed, kb.RunID)
		if uerr == nil {
			s.publish(ctx, &failed)
		} else if !errors.Is(uerr, domain.ErrConflict) {
			return nil, errors.Join(err, uerr)
		}
		return nil, err
	}
	files, err := s.sourceFiles(ctx, p.Company, kb)
	if err != nil {
		return nil, err
	}
	return &KB{KnowledgeBase: presentKB(kb), SourceFiles: files}, nil
}

// errKeptChanging is the 409 of an operation whose conditional writes kept losing to
// concurrent ones (the client retries).
func errKeptChanging(err error) error {
	return domain.Wrap(domain.KindConflict, err, "The knowledge base kept changing concurrently; retry")
}

// notFoundIf turns a store's not-found (the knowledge base deleted meanwhile) into the API's.
func (s *Service) notFoundIf(err error) error {
	if errors.Is(err, domain.ErrNotFound) {
		return notFound("Knowledge base")
	}
	return err
}

// DeleteKB removes a knowledge base and its chunks; its collections and files remain. It marks
// the run deleted first (workers in flight then conflict and delete what they indexed), then
// deletes the chunks, then the record: a failure at any step leaves the record, so the delete
// can be repeated, and never a record-less knowledge base with chunks in the index.
func (s *Service) DeleteKB(ctx context.Context, p domain.Principal, id string) error {
	kb, err := s.kb(ctx, p, id)
	if err != nil {
		return err
	}
	for attempt := 0; !strings.HasPrefix(kb.RunID, deletedRun); attempt++ {
		prev := kb.RunID
		kb.RunID, kb.UpdatedAt = deletedRun+uuid.NewString(), s.now()
		err := s.d.Store.UpdateKB(ctx, kb, prev)
		if err == nil {
			break
		}
		if errors.Is(err, domain.ErrNotFound) {
			return nil // deleted meanwhile
		}
		if errors.Is(err, domain.ErrConflict) && attempt >= 4 {
			return errKeptChanging(err)
		}
		if !errors.Is(err, domain.ErrConflict) {
			return fmt.Errorf("mark knowledge base %s deleted: %w", id, err)
		}
		if kb, err = s.kb(ctx, p, id); err != nil {
			return err
		}
	}
	if kb.Index != "" {
		if _, err := s.d.Index.DeleteKB(ctx, kb.Index, kb.Company, kb.ID); err != nil {
			return fmt.Errorf("delete chunks of knowledge base %s: %w", id, err)
		}
	}
	if err := s.d.Store.DeleteKB(ctx, kb.ID); err != nil {
		return fmt.Errorf("delete knowledge base %s: %w", id, err)
	}
	return nil
}

// settle ends a run that passed its deadline (every redelivery of every job is long over: the
// workers died or their messages were lost) as failed, on whatever read finds it, and tells the
// company's webhooks (naming the run that ended; only the read whose write settled it does).
// The new run id makes any late worker's write conflict. It returns the record as it is now.
func (s *Service) settle(ctx context.Context, kb *domain.KnowledgeBase) (*domain.KnowledgeBase, error) {
	for attempt := 0; ; attempt++ {
		now := s.now()
		if !inProgress(kb) || kb.RunDeadline == nil || !now.After(*kb.RunDeadline) || strings.HasPrefix(kb.RunID, deletedRun) {
			return kb, nil
		}
		msg := fmt.Sprintf("ingestion did not finish within %s; run sync to retry", humanDuration(s.l.RunDeadline))
		next := failedRun(kb, msg, now)
		next.RunID = uuid.NewString()
		next.SourcesRun = next.RunID
		err := s.d.Store.UpdateKB(ctx, &next, kb.RunID)
		if err == nil {
			ended := next
			ended.RunID = kb.RunID
			s.publish(ctx, &ended)
			return &next, nil
		}
		if errors.Is(err, domain.ErrConflict) && attempt >= 4 {
			return nil, errKeptChanging(err)
		}
		if !errors.Is(err, domain.ErrConflict) {
			return nil, fmt.Errorf("settle overdue run of knowledge base %s: %w", kb.ID, err)
		}
		if kb, err = s.d.Store.GetKB(ctx, kb.ID); err != nil {
			return nil, err
		}
	}
}
