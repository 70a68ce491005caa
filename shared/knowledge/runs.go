package knowledge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// writeSource writes a datasource of the job's run and returns the record after the write;
// nil without an error when the run is no longer current (nothing was indexed by this delivery
// yet: the job just stops).
func (s *Service) writeSource(ctx context.Context, kb *domain.KnowledgeBase, d *domain.Datasource) (*domain.KnowledgeBase, error) {
	now := s.now()
	d.UpdatedAt = &now
	next, err := s.d.Store.UpdateSource(ctx, kb.ID, kb.RunID, d)
	if errors.Is(err, domain.ErrConflict) || errors.Is(err, domain.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("update datasource %s of knowledge base %s: %w", d.FileID, kb.ID, err)
	}
	return next, nil
}

// writeIndexed is writeSource after the job indexed: when the run is no longer current, what
// it indexed is deleted if its knowledge base or its file left (leaveRun).
func (s *Service) writeIndexed(ctx context.Context, j job, kb *domain.KnowledgeBase, d *domain.Datasource) (*domain.KnowledgeBase, error) {
	now := s.now()
	d.UpdatedAt = &now
	next, err := s.d.Store.UpdateSource(ctx, kb.ID, kb.RunID, d)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil, s.leaveRun(ctx, nil, j)
	case errors.Is(err, domain.ErrConflict):
		cur, gerr := s.d.Store.GetKB(ctx, kb.ID)
		if errors.Is(gerr, domain.ErrNotFound) {
			return nil, s.leaveRun(ctx, nil, j)
		}
		if gerr != nil {
			return nil, gerr
		}
		return nil, s.leaveRun(ctx, cur, j)
	case err != nil:
		return nil, fmt.Errorf("update datasource %s of knowledge base %s: %w", d.FileID, kb.ID, err)
	}
	return next, nil
}

// leaveRun is what a file job does when its run is no longer current (cur is the record now,
// nil if it is gone): if the knowledge base is gone or being deleted, or the new run dropped
// the file (removed, or failed with its chunks deleted), the file's chunks are deleted, since
// this job may have indexed them after that delete. Otherwise the new run ingests the file
// again (same chunk ids, same content) or kept it unchanged, and nothing is deleted.
func (s *Service) leaveRun(ctx context.Context, cur *domain.KnowledgeBase, j job) error {
	if cur != nil && !strings.HasPrefix(cur.RunID, deletedRun) {
		if d := cur.Sources[j.FileID]; d != nil && d.Status != domain.IngestRemoved && d.Status != domain.IngestFailed {
			return nil
		}
	}
	if j.Index == "" || j.Company == "" {
		return nil
	}
	if _, err := s.d.Index.DeleteFile(ctx, j.Index, j.Company, j.KBID, j.FileID); err != nil {
		return fmt.Errorf("delete chunks of file %s of a superseded run: %w", j.FileID, err)
	}
	return nil
}

// failOrRetry records a job's error: a retryable one as the datasource's last error, returned
// so that SQS delivers the job again; a permanent one as the datasource's failure (failSource).
// indexed says whether this delivery may have indexed chunks before it failed.
func (s *Service) failOrRetry(ctx context.Context, j job, kb *domain.KnowledgeBase, d *domain.Datasource, err error, indexed bool) error {
	msg := sourceReason(err)
	if domain.KindOf(err).Retryable() {
		d.Error = msg
		if _, werr := s.writeSource(ctx, kb, d); werr != nil {
			return errors.Join(err, werr)
		}
		return err
	}
	return s.failSource(ctx, j, kb, d, msg, indexed)
}

// failSource records a datasource failed with msg after deleting whatever part of it may be
// indexed (an earlier version, earlier attempts or jobs, or this one's if indexed), and
// finalises the run if it was the last open datasource.
func (s *Service) failSource(ctx context.Context, j job, kb *domain.KnowledgeBase, d *domain.Datasource, msg string, indexed bool) error {
	if kb.Index != "" && (indexed || d.Residue || d.Attempts > 1 || j.From > 0) {
		if _, err := s.d.Index.DeleteFile(ctx, kb.Index, kb.Company, kb.ID, d.FileID); err != nil {
			return fmt.Errorf("delete chunks of failed file %s: %w", d.FileID, err)
		}
	}
	d.Status, d.Error, d.Chunks, d.Residue = domain.IngestFailed, msg, 0, false
	d.Phase, d.TotalChunks, d.ProcessedChunks = "", 0, 0
	next, err := s.writeSource(ctx, kb, d)
	if err != nil || next == nil {
		return err
	}
	return s.finalize(ctx, next)
}

// dropSource records a datasource removed whose file was deleted while its job ran.
func (s *Service) dropSource(ctx context.Context, j job, kb *domain.KnowledgeBase, d *domain.Datasource) error {
	if _, err := s.d.Index.DeleteFile(ctx, kb.Index, kb.Company, kb.ID, d.FileID); err != nil {
		return fmt.Errorf("delete chunks of deleted file %s: %w", d.FileID, err)
	}
	d.Status, d.Error, d.Chunks, d.Residue = domain.IngestRemoved, "", 0, false
	d.Phase, d.TotalChunks, d.ProcessedChunks = "", 0, 0
	next, err := s.writeSource(ctx, kb, d)
	if err != nil || next == nil {
		return err
	}
	return s.finalize(ctx, next)
}

// failRun ends a run as failed with msg (the run could not proceed; no worker of it is
// writing): its open datasources fail with the same reason.
func (s *Service) failRun(ctx context.Context, kb *domain.KnowledgeBase, msg string) error {
	next := failedRun(kb, msg, s.now())
	err := s.d.Store.UpdateKB(ctx, &next, kb.RunID)
	if err == nil {
		s.publish(ctx, &next)
		return nil
	}
	if !errors.Is(err, domain.ErrConflict) && !errors.Is(err, domain.ErrNotFound) {
		return fmt.Errorf("fail run of knowledge base %s: %w", kb.ID, err)
	}
	return nil
}

// failedRun is kb with its run ended as failed with msg: its open datasources fail with the
// same reason, and the run's progress reads done.
func failedRun(kb *domain.KnowledgeBase, msg string, now time.Time) domain.KnowledgeBase {
	next := *kb
	next.Sources = make(map[string]*domain.Datasource, len(kb.Sources))
	for id, d := range kb.Sources {
		c := *d
		if isOpen(&c) {
			c.Status, c.Error, c.UpdatedAt = domain.IngestFailed, msg, &now
		}
		next.Sources[id] = &c
	}
	if next.Status != domain.KBFailed {
		next.StatusChanged = now
	}
	next.Status, next.Error, next.RunDeadline, next.SourcesRun, next.UpdatedAt = domain.KBFailed, msg, nil, kb.RunID, now
	next.Metadata = domain.ProcessingMetadata{Phase: phaseDone, Message: msg}
	return next
}

// finalize ends a run whose datasources are all done (the write that left none pending or
// running calls it with the record after that write): the index is refreshed, so that every
// chunk is searchable when the status says completed; the status is completed if at least one
// file is ingested (or unchanged), else failed with the reason.
func (s *Service) finalize(ctx context.Context, kb *domain.KnowledgeBase) error {
	if kb.Status != domain.KBRunning || kb.SourcesRun != kb.RunID || anyOpen(kb) {
		return nil
	}
	kb, err := s.dropVanished(ctx, kb)
	if err != nil {
		return err
	}
	if kb.Index != "" {
		if err := s.d.Index.Refresh(ctx, kb.Index); err != nil {
			return fmt.Errorf("refresh the index of knowledge base %s: %w", kb.ID, err)
		}
	}
	now := s.now()
	var ok, unchanged, failed, total, chunks int
	for _, d := range kb.Sources {
		switch d.Status {
		case domain.IngestRemoved:
			continue
		case domain.IngestIngested:
			ok++
			chunks += d.Chunks
		case domain.IngestUnchanged:
			ok++
			unchanged++
			chunks += d.Chunks
		case domain.IngestFailed:
			failed++
		}
		total++
	}
	next := *kb
	next.Files = slices.DeleteFunc(slices.Clone(kb.Files), func(id string) bool {
		d := kb.Sources[id]
		return d != nil && d.Status == domain.IngestRemoved
	})
	next.RunDeadline, next.StatusChanged, next.UpdatedAt = nil, now, now
	msg := fmt.Sprintf("Ingested %d of %d files", ok, total)
	if unchanged > 0 {
		msg += fmt.Sprintf(" (%d unchanged)", unchanged)
	}
	if failed > 0 {
		msg += fmt.Sprintf("; %d failed (see datasource_errors)", failed)
	}
	next.Metadata = domain.ProcessingMetadata{Phase: phaseDone, TotalChunks: chunks, ProcessedChunks: chunks, Message: msg}
	switch {
	case ok > 0:
		next.Status, next.Completed, next.Error = domain.KBCompleted, &now, ""
	case total == 0:
		next.Status, next.Error = domain.KBFailed, "the knowledge base has no files: add files to its collections or selected_datasources and run sync"
	default:
		next.Status, next.Error = domain.KBFailed, fmt.Sprintf("none of its %d files could be ingested; datasource_errors says why for each", total)
	}
	err = s.d.Store.UpdateKB(ctx, &next, kb.RunID)
	if err == nil {
		s.publish(ctx, &next)
		return nil
	}
	if !errors.Is(err, domain.ErrConflict) && !errors.Is(err, domain.ErrNotFound) {
		return fmt.Errorf("finalise run of knowledge base %s: %w", kb.ID, err)
	}
	return nil
}

// dropVanished takes out of a finished run the collections deleted while it ran and the files
// that were sources only through them (their chunks deleted, their datasources removed), so
// that the run settles with the sources that remain — completed with them, or failed with no
// files — instead of keeping a deleted collection's files searchable until the next sync. It
// returns kb itself when every collection is still there (one GetCollection each).
func (s *Service) dropVanished(ctx context.Context, kb *domain.KnowledgeBase) (*domain.KnowledgeBase, error) {
	var live []string
	keep := map[string]bool{}
	for _, id := range kb.Files {
		keep[id] = true
	}
	for _, cid := range kb.Collections {
		c, err := s.d.Store.GetCollection(ctx, cid)
		if errors.Is(err, domain.ErrNotFound) || (err == nil && c.Company != kb.Company) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("collection %s of knowledge base %s: %w", cid, kb.ID, err)
		}
		live = append(live, cid)
		for _, fid := range c.FileIDs {
			keep[fid] = true
		}
	}
	if len(live) == len(kb.Collections) {
		return kb, nil
	}
	now := s.now()
	next := *kb
	next.Collections = live
	next.Sources = make(map[string]*domain.Datasource, len(kb.Sources))
	for id, d := range kb.Sources {
		c := *d
		if !keep[id] && c.Status != domain.IngestRemoved {
			if kb.Index != "" {
				if _, err := s.d.Index.DeleteFile(ctx, kb.Index, kb.Company, kb.ID, id); err != nil {
					return nil, fmt.Errorf("delete chunks of file %s of a deleted collection: %w", id, err)
				}
			}
			c = domain.Datasource{FileID: id, Name: d.Name, Status: domain.IngestRemoved, UpdatedAt: &now}
		}
		next.Sources[id] = &c
	}
	return &next, nil
}

// dropFile takes a file out of every knowledge base of its company that holds it (DeleteFile
// calls it before deleting the file's bytes and record): its datasource is marked removed
// first — a worker that indexes the file after that finds the mark and deletes what it indexed
// — then its chunks are deleted, then it leaves selected_datasources (at once when no run is in
// progress; otherwise the run's end drops it, since a whole-record write would overwrite the
// datasources the run's workers write meanwhile).
func (s *Service) dropFile(ctx context.Context, f *domain.File) error {
	kbs, err := s.allKBs(ctx, f.Company)
	if err != nil {
		return err
	}
	for _, kb := range kbs {
		if err := s.dropFromKB(ctx, kb, f.ID); err != nil {
			return err
		}
	}
	return nil
}

// holds reports whether a knowledge base has a file among its datasources or selected files.
func holds(kb *domain.KnowledgeBase, fileID string) bool {
	if d := kb.Sources[fileID]; d != nil && d.Status != domain.IngestRemoved {
		return true
	}
	return slices.Contains(kb.Files, fileID)
}

func (s *Service) dropFromKB(ctx context.Context, kb *domain.KnowledgeBase, fileID string) error {
	for attempt := 0; holds(kb, fileID); attempt++ {
		now := s.now()
		d := &domain.Datasource{FileID: fileID, Status: domain.IngestRemoved, UpdatedAt: &now}
		if prev := kb.Sources[fileID]; prev != nil {
			d.Name = prev.Name
		}
		cur, err := s.d.Store.UpdateSource(ctx, kb.ID, kb.RunID, d)
		switch {
		case errors.Is(err, domain.ErrNotFound):
			return nil
		case errors.Is(err, domain.ErrConflict) && attempt < 4:
			if kb, err = s.d.Store.GetKB(ctx, kb.ID); errors.Is(err, domain.ErrNotFound) {
				return nil
			} else if err != nil {
				return fmt.Errorf("drop file %s from knowledge base %s: %w", fileID, kb.ID, err)
			}
			continue
		case err != nil:
			return fmt.Errorf("drop file %s from knowledge base %s: %w", fileID, kb.ID, err)
		}
		if cur.Index != "" {
			if _, err := s.d.Index.DeleteFile(ctx, cur.Index, cur.Company, cur.ID, fileID); err != nil {
				return fmt.Errorf("delete chunks of file %s of knowledge base %s: %w", fileID, cur.ID, err)
			}
		}
		if inProgress(cur) {
			return s.finalize(ctx, cur) // the file may have been the run's last open datasource
		}
		if slices.Contains(cur.Files, fileID) {
			cur.Files = slices.DeleteFunc(slices.Clone(cur.Files), func(id string) bool { return id == fileID })
			cur.UpdatedAt = now
			if err := s.d.Store.UpdateKB(ctx, cur, cur.RunID); err != nil && !errors.Is(err, domain.ErrConflict) && !errors.Is(err, domain.ErrNotFound) {
				return fmt.Errorf("drop file %s from knowledge base %s: %w", fileID, cur.ID, err)
			}
		}
		return nil
	}
	return nil
}

// stageError is an error of one stage of a file's ingestion; Stage prefixes its message in the
// datasource's error ("" when the cause's message says it all).
type stageError struct {
	Stage string
	Err   error
}

func (e *stageError) Error() string {
	if e.Stage == "" {
		return e.Err.Error()
	}
	return e.Stage + ": " + e.Err.Error()
}

func (e *stageError) Unwrap() error { return e.Err }

func stageErr(stage string, err error) error { return &stageError{Stage: stage, Err: err} }

// permanent is a failure a redelivery could only repeat, with a message for the user.
func permanent(msg string) error { return stageErr("", domain.Errorf(domain.KindInvalid, "%s", msg)) }
