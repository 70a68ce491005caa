package knowledge

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/extract"
)

// ProcessJob runs one job of the ingestion queue (the ingestion function's processor). A
// retryable error (domain kinds internal, overloaded, rate limited) is returned so that SQS
// delivers the job again, after the datasource recorded it as its last error; a permanent one is
// recorded as the datasource's failure and nil is returned. A job of a run that was superseded
// (sync, delete) stops without writing; a body this package did not write is an
// invalid_request error, which the consumer drops.
func (s *Service) ProcessJob(ctx context.Context, body string) error {
	j, err := parseJob(body)
	if err != nil {
		return err
	}
	if j.Kind == jobStart {
		return s.startRun(ctx, j)
	}
	return s.ingestFile(ctx, j)
}

// HandleDeadLetter records a job that exhausted its deliveries (the dead-letter queue's
// processor): a file job's datasource fails with "ingestion failed after N attempts: <its last
// error>" and the run is finalised if it was the last; a start job that never ran fails the run.
// A knowledge base it cannot read is tried again (the queue redelivers) until the run's
// deadline; past it, the run counts as failed (as the first read of the record will settle it)
// and the company's webhooks are told so from the job alone (unreadable).
func (s *Service) HandleDeadLetter(ctx context.Context, body string) error {
	j, err := parseJob(body)
	if err != nil {
		return err
	}
	kb, err := s.d.Store.GetKB(ctx, j.KBID)
	if errors.Is(err, domain.ErrNotFound) {
		if j.Kind == jobFile {
			return s.leaveRun(ctx, nil, j)
		}
		return nil
	}
	if err != nil {
		return s.unreadable(ctx, j, fmt.Errorf("dead letter of knowledge base %s: %w", j.KBID, err))
	}
	if kb.RunID != j.RunID {
		if j.Kind == jobFile {
			return s.leaveRun(ctx, kb, j)
		}
		return nil
	}
	if j.Kind == jobStart {
		if kb.SourcesRun != j.RunID {
			return s.failRun(ctx, kb, "ingestion could not be started after repeated attempts; run sync to retry")
		}
		// Resolved, but its file jobs could not all be queued.
		for _, id := range sortedIDs(kb, func(d *domain.Datasource) bool { return d.Status == domain.IngestPending }) {
			d := *kb.Sources[id]
			d.Status, d.Error = domain.IngestFailed, "ingestion could not be queued; run sync to retry"
			next, err := s.writeSource(ctx, kb, &d)
			if err != nil || next == nil {
				return err
			}
			kb = next
		}
		return s.finalize(ctx, kb)
	}
	ds := kb.Sources[j.FileID]
	if ds == nil {
		return nil
	}
	if ds.Done() {
		return s.finalize(ctx, kb)
	}
	last := ds.Error
	if last == "" {
		last = "the worker stopped without reporting an error (out of time or memory?)"
	}
	d := *ds
	return s.failSource(ctx, j, kb, &d, fmt.Sprintf("ingestion failed after %d attempts: %s", max(d.Attempts, 1), last), true)
}

// startRun resolves a run's datasources (the files of its collections and its selected files,
// once each; archived files included: archiving takes a file out of search, not out of the
// index), compares them with the last run's by content hash and by whether their chunks were
// embedded with contextual headers, as the knowledge base's chunking_strategy now says
// (unchanged: skipped; removed: their chunks deleted; new or changed: pending) and queues one
// file job per pending datasource. A knowledge base in a legacy index (made before the english
// sub-field) moves to its embedding space's current index: every file is indexed again there.
func (s *Service) startRun(ctx context.Context, j job) error {
	kb, err := s.d.Store.GetKB(ctx, j.KBID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("start run of knowledge base %s: %w", j.KBID, err)
	}
	if kb.RunID != j.RunID {
		return nil
	}
	if kb.SourcesRun == j.RunID { // an earlier delivery resolved the run
		if !anyOpen(kb) {
			return s.finalize(ctx, kb)
		}
		return s.sendPending(ctx, kb)
	}
	ids, files, err := s.resolveSources(ctx, kb)
	if err != nil {
		return err
	}
	if len(ids) > s.l.MaxDatasources {
		return s.failRun(ctx, kb, fmt.Sprintf("the knowledge base would hold %d files, more than the %d allowed; remove files from its collections and run sync", len(ids), s.l.MaxDatasources))
	}
	moved := false // out of a legacy index: every file is indexed again
	if kb.Index == "" || s.d.Index.Legacy(kb.Index) {
		legacy := kb.Index
		if err := s.ensureIndex(ctx, kb); err != nil {
			return err
		}
		if moved = legacy != "" && kb.Index != legacy; moved {
			// Its chunks leave the legacy index first: a crash before the record names the new
			// index repeats this (then a no-op). Until the run's files are indexed again, a
			// search finds what is there so far, as during any sync.
			if _, err := s.d.Index.DeleteKB(ctx, legacy, kb.Company, kb.ID); err != nil {
				return fmt.Errorf("move knowledge base %s out of index %s: %w", kb.ID, legacy, err)
			}
		}
	}
	now := s.now()
	next := make(map[string]*domain.Datasource, len(ids))
	for _, id := range ids {
		f, prev := files[id], kb.Sources[id]
		d := &domain.Datasource{FileID: id, Name: f.Name, Status: domain.IngestPending, UpdatedAt: &now,
			Residue: !moved && prev != nil && (prev.Chunks > 0 || prev.Attempts > 0 || prev.ProcessedChunks > 0 || prev.Residue)}
		switch {
		case f.Status == domain.FileUploading:
			d.Status, d.Error = domain.IngestFailed, "the file's upload has not completed: complete it and run sync"
		case f.Status == domain.FileError:
			d.Status, d.Error = domain.IngestFailed, "the file could not be stored; upload it again and run sync"
		case !moved && prev != nil && (prev.Status == domain.IngestIngested || prev.Status == domain.IngestUnchanged) &&
			prev.ContentHash != "" && prev.ContentHash == f.ContentHash && prev.ContextualHeaders == kb.Chunking.ContextualHeaders:
			d.Status, d.ContentHash, d.Chunks = domain.IngestUnchanged, prev.ContentHash, prev.Chunks
			d.ContextualHeaders = prev.ContextualHeaders
		}
		next[id] = d
	}
	// Files that left the knowledge base (and failed ones that had chunks): chunks first, then
	// the record, so a crash in between repeats the delete.
	for _, id := range sortedIDs(kb, func(d *domain.Datasource) bool { return d.Status != domain.IngestRemoved }) {
		d := next[id]
		if d != nil && (d.Status != domain.IngestFailed || kb.Sources[id].Chunks == 0) {
			continue
		}
		if _, err := s.d.Index.DeleteFile(ctx, kb.Index, kb.Company, kb.ID, id); err != nil {
			return fmt.Errorf("delete chunks of removed file %s: %w", id, err)
		}
		if d == nil {
			next[id] = &domain.Datasource{FileID: id, Name: kb.Sources[id].Name, Status: domain.IngestRemoved, UpdatedAt: &now}
		}
	}
	if kb.Status != domain.KBRunning {
		kb.StatusChanged = now
	}
	kb.Sources, kb.SourcesRun, kb.Status, kb.Error, kb.UpdatedAt = next, j.RunID, domain.KBRunning, "", now
	kb.Metadata = domain.ProcessingMetadata{}
	if !anyOpen(kb) {
		return s.finalize(ctx, kb)
	}
	if err := s.d.Store.UpdateKB(ctx, kb, j.RunID); err != nil {
		if errors.Is(err, domain.ErrConflict) || errors.Is(err, domain.ErrNotFound) {
			return nil
		}
		return fmt.Errorf("record the sources of knowledge base %s: %w", kb.ID, err)
	}
	return s.sendPending(ctx, kb)
}

// resolveSources lists the files of a knowledge base: its collections' files and its selected
// files that still exist, once each, in order. Deleted collections and files leave it.
func (s *Service) resolveSources(ctx context.Context, kb *domain.KnowledgeBase) ([]string, map[string]*domain.File, error) {
	var candidates, colls []string
	for _, cid := range kb.Collections {
		c, err := s.d.Store.GetCollection(ctx, cid)
		if errors.Is(err, domain.ErrNotFound) || (err == nil && c.Company != kb.Company) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("collection %s of knowledge base %s: %w", cid, kb.ID, err)
		}
		colls = append(colls, cid)
		candidates = append(candidates, c.FileIDs...)
	}
	files, err := s.FilesOf(ctx, kb.Company, append(candidates, kb.Files...))
	if err != nil {
		return nil, nil, err
	}
	var ids, selected []string
	seen := map[string]bool{}
	add := func(id string) {
		if files[id] != nil && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, fid := range candidates {
		add(fid)
	}
	for _, fid := range kb.Files {
		if files[fid] != nil {
			selected = append(selected, fid)
			add(fid)
		}
	}
	kb.Collections, kb.Files = colls, selected
	return ids, files, nil
}

// ingestFile runs a file job: extract, chunk, embed and index chunks [From, From+ChunksPerJob)
// of the file, then either queue the rest (a continuation) or record the datasource ingested.
// Store writes: one UpdateSource when it starts, one more once the chunk count is known if
// the file needs more than one embedding batch, one when it ends; never one per chunk.
func (s *Service) ingestFile(ctx context.Context, j job) error {
	kb, err := s.d.Store.GetKB(ctx, j.KBID)
	if errors.Is(err, domain.ErrNotFound) {
		return s.leaveRun(ctx, nil, j)
	}
	if err != nil {
		return fmt.Errorf("file job of knowledge base %s: %w", j.KBID, err)
	}
	if kb.RunID != j.RunID {
		return s.leaveRun(ctx, kb, j)
	}
	ds := kb.Sources[j.FileID]
	if ds == nil {
		return nil
	}
	if ds.Done() {
		return s.finalize(ctx, kb) // a redelivery after the write that ended the datasource
	}
	if ds.ProcessedChunks > j.From {
		// An earlier delivery indexed this range; if its continuation may not have been
		// queued (the send failed), queue it.
		if ds.ProcessedChunks == min(j.From+s.l.ChunksPerJob, ds.TotalChunks) && ds.ProcessedChunks < ds.TotalChunks {
			return s.send(ctx, s.fileJob(kb, j.FileID, ds.ProcessedChunks))
		}
		return nil
	}
	d := *ds
	d.Status, d.Attempts = domain.IngestRunning, d.Attempts+1
	if j.From == 0 {
		d.Phase, d.TotalChunks, d.ProcessedChunks = phaseExtracting, 0, 0
	}
	if kb, err = s.writeSource(ctx, kb, &d); err != nil || kb == nil {
		return err
	}
	f, err := s.d.Store.GetFile(ctx, j.FileID)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && f.Company != kb.Company) {
		return s.dropSource(ctx, j, kb, &d) // deleted meanwhile
	}
	if err != nil {
		return s.failOrRetry(ctx, j, kb, &d, stageErr("reading the file's record failed", err), false)
	}
	p, err := s.prepare(ctx, kb, f)
	if err != nil {
		return s.failOrRetry(ctx, j, kb, &d, err, false)
	}
	texts, emb := p.texts, p.emb
	total := len(texts)
	from, to := min(j.From, total), min(j.From+s.l.ChunksPerJob, total)
	if from == 0 && (d.Residue || d.Attempts > 1) {
		// A changed file's old chunks all go, whatever their number (a file new to the
		// knowledge base, on its first attempt, has none: no request).
		if _, err := s.d.Index.DeleteFile(ctx, kb.Index, kb.Company, kb.ID, f.ID); err != nil {
			return s.failOrRetry(ctx, j, kb, &d, stageErr("indexing failed", err), false)
		}
	}
	if from == 0 {
		next, err := s.admit(ctx, kb, &d, total)
		if next == nil && err == nil {
			return nil // the run was superseded; nothing indexed yet
		}
		if next != nil {
			kb = next
		}
		if err != nil {
			return s.failOrRetry(ctx, j, kb, &d, err, false)
		}
		if total > s.l.EmbedBatch && d.TotalChunks != total {
			d.Phase, d.TotalChunks = phaseEmbedding, total
			if kb, err = s.writeSource(ctx, kb, &d); err != nil || kb == nil {
				return err
			}
		}
	}
	tokens, err := s.embedAndIndex(ctx, emb, kb, f, p, from, to, j.RunID)
	s.countEmbedding(ctx, kb.Company, "", tokens) // billed, whatever became of them
	if err != nil && !errors.Is(err, errSuperseded) {
		return s.failOrRetry(ctx, j, kb, &d, err, true)
	}
	// The file may have been deleted (its datasource marked removed, its chunks deleted) or
	// the run superseded while this job indexed: then what it indexed must go.
	cur, err := s.d.Store.GetKB(ctx, kb.ID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return s.leaveRun(ctx, nil, j)
	case err != nil:
		return fmt.Errorf("file job of knowledge base %s: %w", j.KBID, err)
	case cur.RunID != j.RunID:
		return s.leaveRun(ctx, cur, j)
	case cur.Sources[f.ID] == nil || cur.Sources[f.ID].Status == domain.IngestRemoved:
		if _, err := s.d.Index.DeleteFile(ctx, kb.Index, kb.Company, kb.ID, f.ID); err != nil {
			return fmt.Errorf("delete chunks of removed file %s: %w", f.ID, err)
		}
		return s.finalize(ctx, cur)
	}
	d.TotalChunks, d.ProcessedChunks, d.Error = total, to, ""
	if to < total {
		// The continuation is another job: attempts counts its deliveries, from 1.
		d.Phase, d.Attempts = phaseEmbedding, 0
		if _, err := s.writeIndexed(ctx, j, kb, &d); err != nil {
			return err
		}
		return s.send(ctx, s.fileJob(kb, f.ID, to))
	}
	// A done datasource keeps no progress fields: 1,000 of them share one 400 KB item.
	d.Status, d.Chunks, d.ContentHash, d.Residue = domain.IngestIngested, total, f.ContentHash, false
	d.ContextualHeaders = p.embedded != nil
	d.Phase, d.TotalChunks, d.ProcessedChunks = "", 0, 0
	next, err := s.writeIndexed(ctx, j, kb, &d)
	if err != nil || next == nil {
		return err
	}
	return s.finalize(ctx, next)
}

// prepared is a file ready to embed: its chunks' texts (stored and returned), what each is
// embedded as when that differs (contextual headers; nil otherwise), and the embedder.
type prepared struct {
	texts, embedded []string
	emb             Embedder
}

// input is what chunks [i, end) are embedded as.
func (p prepared) input(i, end int) []string {
	if p.embedded != nil {
		return p.embedded[i:end]
	}
	return p.texts[i:end]
}

// prepare reads, extracts and chunks a file; the chunks fit the embedder's token limit, and
// with chunking_strategy.contextual_headers each is embedded after its header (context.go). A
// file of more than MaxFileChunks chunks fails.
func (s *Service) prepare(ctx context.Context, kb *domain.KnowledgeBase, f *domain.File) (prepared, error) {
	if f.Status != domain.FileActive && f.Status != domain.FileArchived {
		return prepared{}, permanent(fmt.Sprintf("the file is not stored (status %s): complete its upload and run sync", f.Status))
	}
	data, _, err := s.d.Blobs.Get(ctx, f.ObjectKey, s.l.MaxExtractBytes)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return prepared{}, permanent("the file's content is missing from storage; upload the file again")
	case domain.KindOf(err) == domain.KindTooLarge:
		return prepared{}, permanent(fmt.Sprintf("the file is larger than %d MB, the most one ingestion reads", s.l.MaxExtractBytes>>20))
	case err != nil:
		return prepared{}, stageErr("reading the file from storage failed", err)
	}
	res, err := extract.Text(ctx, f.Name, data, extract.Limits{MaxBytes: int(s.l.MaxExtractBytes)})
	if err != nil {
		if domain.KindOf(err) == domain.KindInternal {
			return prepared{}, stageErr("text extraction failed", err)
		}
		return prepared{}, stageErr("", err) // extract's messages say what is wrong and what to do
	}
	if s.d.NewSplitter == nil {
		return prepared{}, errors.New("knowledge: no splitter configured (Deps.NewSplitter)")
	}
	sp, err := s.d.NewSplitter(kb.Chunking)
	if err != nil {
		return prepared{}, stageErr("the knowledge base's chunking_strategy is invalid", err)
	}
	emb, err := s.d.Embedders.Embedder(ctx, kb.Embedding)
	if err != nil {
		return prepared{}, stageErr("the knowledge base's embedding model is unavailable", err)
	}
	if ts, ok := sp.(tokenSplitter); ok {
		sp = ts.WithTokens(emb.Tokens) // split_by "token" counts the model's own tokens
	}
	p := prepared{emb: emb}
	if kb.Chunking.ContextualHeaders {
		chunks, starts := splitAt(sp, res.Text)
		var fits []fitted
		texts, fit := fitCounted(emb, chunks, &fits)
		p.texts, p.embedded = texts, withHeaders(fit, texts, headers(f.Name, res.Headings, starts), fits)
	} else {
		p.texts = fitTokens(emb, sp.Split(res.Text))
	}
	if len(p.texts) == 0 {
		return prepared{}, permanent("no text was left to index after chunking")
	}
	if len(p.texts) > s.l.MaxFileChunks {
		return prepared{}, permanent(fmt.Sprintf("the file makes %s chunks, more than the %s one file may make: "+
			"give the knowledge base a larger chunking_strategy.chunk_size, or split the file", thousands(len(p.texts)), thousands(s.l.MaxFileChunks)))
	}
	return p, nil
}

// tokenSplitter is a splitter that can count the embedding model's tokens (shared/chunk's
// split_by "token").
type tokenSplitter interface {
	WithTokens(count func(string) int) *chunk.Splitter
}

// admit checks, when a file's chunk count is known (its first job), that the run's files stay
// within MaxKBChunks together. Every other datasource counts what it may still add: its chunks
// when done or counted, MaxFileChunks while its count is unknown. If even that bound fits, the
// file goes on with no write; otherwise its count is recorded first, and the record after that
// write decides: the files whose counts were recorded before it, and it, must fit (a file whose
// count is unknown then either was admitted on a bound that covered this one, or will see this
// count when it is checked). It returns the record after any write, nil when the run is no
// longer current, or a permanent error for a file that does not fit.
func (s *Service) admit(ctx context.Context, kb *domain.KnowledgeBase, d *domain.Datasource, total int) (*domain.KnowledgeBase, error) {
	bound := total
	for id, o := range kb.Sources {
		if id != d.FileID {
			bound += chunksOf(o, s.l.MaxFileChunks)
		}
	}
	if bound <= s.l.MaxKBChunks {
		return kb, nil
	}
	d.Phase, d.TotalChunks = phaseEmbedding, total
	next, err := s.writeSource(ctx, kb, d)
	if err != nil || next == nil {
		return nil, err
	}
	sum := total
	for id, o := range next.Sources {
		if id != d.FileID {
			sum += chunksOf(o, 0)
		}
	}
	if sum > s.l.MaxKBChunks {
		return next, permanent(fmt.Sprintf("the file makes %s chunks, which would take the knowledge base past the %s chunks "+
			"its files may make together: remove files from it, or give it a larger chunking_strategy.chunk_size", thousands(total), thousands(s.l.MaxKBChunks)))
	}
	return next, nil
}

// chunksOf is what a datasource adds to its run's chunks: its chunks when ingested or unchanged,
// its count when running and counted, unknown (pending, or running before its count is known)
// otherwise; nothing when failed or removed.
func chunksOf(d *domain.Datasource, unknown int) int {
	switch {
	case d.Status == domain.IngestIngested || d.Status == domain.IngestUnchanged:
		return d.Chunks
	case d.Status == domain.IngestRunning && d.TotalChunks > 0:
		return d.TotalChunks
	case isOpen(d):
		return unknown
	}
	return 0
}

// putGroup is the most chunks one Put sends (one _bulk request of the adapter).
const putGroup = 500

// errSuperseded stops a job's embedding when its run was superseded or its file left the
// knowledge base meanwhile; the job then settles as after its last batch.
var errSuperseded = errors.New("superseded")

// embedAndIndex embeds chunks [from, to) in batches of EmbedBatch and indexes them as a
// pipeline: an indexer puts the chunks embedded so far (as many as are ready, up to putGroup a
// Put) while the next batch is embedded. While each batch after the first is embedded, the
// knowledge base is read again: a job whose knowledge base was deleted or synced, or whose file
// left it, stops after that batch (errSuperseded) instead of embedding the rest of its range.
// Neither the Puts nor the reads hold up the embedder. It returns the tokens it embedded (the
// provider's count), an error or not.
func (s *Service) embedAndIndex(ctx context.Context, emb Embedder, kb *domain.KnowledgeBase, f *domain.File, p prepared, from, to int, runID string) (int, error) {
	texts := p.texts
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []domain.Chunk, (to-from)/s.l.EmbedBatch+1) // never blocks the embedder
	var putErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for b := range batches {
			group := b
		more:
			for len(group) < putGroup {
				select {
				case next, ok := <-batches:
					if !ok {
						break more
					}
					group = append(group, next...)
				default:
					break more
				}
			}
			if putErr != nil {
				continue
			}
			if putErr = s.d.Index.Put(ctx, kb.Index, group); putErr != nil {
				cancel()
			}
		}
	}()
	var embedErr error
	superseded, tokens := false, 0
	for i := from; i < to; i += s.l.EmbedBatch {
		end := min(i+s.l.EmbedBatch, to)
		var stale chan bool
		if i > from {
			stale = make(chan bool, 1)
			go func() { stale <- s.stale(ctx, kb.ID, runID, f.ID) }()
		}
		vecs, n, err := embed(ctx, emb, p.input(i, end))
		tokens += n
		if stale != nil && <-stale {
			superseded = true
			break
		}
		if err == nil && len(vecs) != end-i {
			err = fmt.Errorf("the embedder returned %d vectors for %d texts", len(vecs), end-i)
		}
		if err != nil {
			embedErr = stageErr("embedding failed", err)
			break
		}
		batch := make([]domain.Chunk, 0, end-i)
		for k := i; k < end; k++ {
			batch = append(batch, domain.Chunk{KBID: kb.ID, Company: kb.Company, FileID: f.ID, FileName: f.Name,
				ChunkIndex: k, Text: texts[k], Tags: f.Tags, ContentHash: f.ContentHash, Vector: vecs[k-i]})
		}
		batches <- batch
		if ctx.Err() != nil {
			break
		}
	}
	close(batches)
	<-done
	switch {
	case superseded:
		return tokens, errSuperseded
	case putErr != nil:
		return tokens, stageErr("indexing failed", putErr)
	}
	return tokens, embedErr
}

// stale reports whether a job's work has become useless: its knowledge base is gone or in
// another run, or its file left the run. A failed read is not taken as stale (the job's own
// checks after its batches decide then).
func (s *Service) stale(ctx context.Context, kbID, runID, fileID string) bool {
	cur, err := s.d.Store.GetKB(ctx, kbID)
	if errors.Is(err, domain.ErrNotFound) {
		return true
	}
	if err != nil {
		return false
	}
	d := cur.Sources[fileID]
	return cur.RunID != runID || d == nil || d.Status == domain.IngestRemoved
}
