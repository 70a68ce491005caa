package knowledge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// The kinds of ingestion jobs (the bodies of the ingestion queue's messages; only this package
// writes and reads them).
const (
	// jobStart resolves a run's datasources and queues one file job per file to ingest.
	jobStart = "start"
	// jobFile ingests chunks [From, From+ChunksPerJob) of one file and queues the rest of the
	// file as another file job (a continuation) when there is more.
	jobFile = "file"
)

// job is one message of the ingestion queue.
type job struct {
	Kind   string `json:"kind"`
	KBID   string `json:"kb_id"`
	RunID  string `json:"run_id"`
	FileID string `json:"file_id,omitempty"`
	From   int    `json:"from,omitempty"` // first chunk index of a file job
	// Index and Company of a file job let a worker that finds its knowledge base gone delete
	// what an earlier delivery may have indexed.
	Index   string `json:"index,omitempty"`
	Company string `json:"company,omitempty"`
	// Deadline is the run's RunDeadline: past it, the dead-letter processor that still cannot
	// read the knowledge base tells the company's webhooks (Company) that the run failed.
	Deadline *time.Time `json:"deadline,omitempty"`
}

// parseJob reads a message body. A body this package did not write can never succeed: it is an
// invalid_request error, which the queue consumer drops instead of retrying.
func parseJob(body string) (job, error) {
	var j job
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		return j, domain.Wrap(domain.KindInvalid, err, "malformed ingestion job")
	}
	switch {
	case j.KBID == "" || j.RunID == "":
		return j, domain.Errorf(domain.KindInvalid, "ingestion job without kb_id or run_id")
	case j.Kind == jobFile && (j.FileID == "" || j.From < 0):
		return j, domain.Errorf(domain.KindInvalid, "file job without file_id or with a negative from")
	case j.Kind != jobStart && j.Kind != jobFile:
		return j, domain.Errorf(domain.KindInvalid, "unknown ingestion job kind %q", j.Kind)
	}
	return j, nil
}

// CheckJob reports whether body is an ingestion job this package wrote (the sample events of
// the ingestion functions are checked with it): nil, or the invalid_request error ProcessJob
// would return.
func CheckJob(body string) error {
	_, err := parseJob(body)
	return err
}

// send enqueues a job on the ingestion queue (a standard queue: no message group).
func (s *Service) send(ctx context.Context, j job) error {
	if s.d.Queue == nil {
		return errNoQueue()
	}
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := s.d.Queue.Send(ctx, string(b), ""); err != nil {
		return fmt.Errorf("queue %s job of knowledge base %s: %w", j.Kind, j.KBID, err)
	}
	return nil
}

// ensureIndex sets the index of a knowledge base created without one.
func (s *Service) ensureIndex(ctx context.Context, kb *domain.KnowledgeBase) error {
	emb, err := s.d.Embedders.Embedder(ctx, kb.Embedding)
	if err != nil {
		return fmt.Errorf("embedder of knowledge base %s: %w", kb.ID, err)
	}
	if kb.Index, err = s.d.Index.EnsureIndex(ctx, emb.Name(), emb.Dimensions()); err != nil {
		return fmt.Errorf("vector index of knowledge base %s: %w", kb.ID, err)
	}
	return nil
}

// sendPending queues the file job of every pending datasource.
func (s *Service) sendPending(ctx context.Context, kb *domain.KnowledgeBase) error {
	for _, id := range sortedIDs(kb, func(d *domain.Datasource) bool { return d.Status == domain.IngestPending }) {
		if err := s.send(ctx, s.fileJob(kb, id, 0)); err != nil {
			return err
		}
	}
	return nil
}

// fileJob is the job of chunks [from, …) of a file; it carries the index and the company so
// that a worker finding its knowledge base gone can still delete what it indexed.
func (s *Service) fileJob(kb *domain.KnowledgeBase, fileID string, from int) job {
	return job{Kind: jobFile, KBID: kb.ID, RunID: kb.RunID, FileID: fileID, From: from, Index: kb.Index, Company: kb.Company, Deadline: kb.RunDeadline}
}

// startJob is the job that starts kb's run.
func startJob(kb *domain.KnowledgeBase) job {
	return job{Kind: jobStart, KBID: kb.ID, RunID: kb.RunID, Company: kb.Company, Deadline: kb.RunDeadline}
}

// errNoQueue is the answer to creating or syncing a knowledge base on a deployment without an
// ingestion queue: a configuration error (api_error; the cause goes to the log), never a
// knowledge base left pending for ever.
func errNoQueue() error {
	return domain.Wrap(domain.KindInternal, errors.New("knowledge: no ingestion queue configured (INGEST_QUEUE_URL)"), domain.MsgInternal)
}

// Phases of a datasource's ingestion and of a run's processing_metadata, in order.
const (
	phaseExtracting = "extracting"
	phaseChunking   = "chunking"
	phaseEmbedding  = "embedding"
	phaseIndexing   = "indexing"
	phaseDone       = "done"
)

var phaseOrder = map[string]int{phaseExtracting: 0, phaseChunking: 1, phaseEmbedding: 2, phaseIndexing: 3, phaseDone: 4}

// deletedRun starts the run id of a knowledge base being deleted: its workers, finding it, delete
// what they indexed instead of stopping quietly as after a sync.
const deletedRun = "deleted:"

// isOpen reports whether a datasource still has work in its run.
func isOpen(d *domain.Datasource) bool {
	return d.Status == domain.IngestPending || d.Status == domain.IngestRunning
}

// anyOpen reports whether a run still has a datasource pending or running.
func anyOpen(kb *domain.KnowledgeBase) bool {
	for _, d := range kb.Sources {
		if isOpen(d) {
			return true
		}
	}
	return false
}

// inProgress reports whether a knowledge base has a run that has not ended.
func inProgress(kb *domain.KnowledgeBase) bool {
	return kb.Status == domain.KBPending || kb.Status == domain.KBRunning
}

// sortedIDs lists the file ids of the datasources that keep(d) selects, sorted.
func sortedIDs(kb *domain.KnowledgeBase, keep func(*domain.Datasource) bool) []string {
	var ids []string
	for id, d := range kb.Sources {
		if keep(d) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// liveMetadata is a running knowledge base's processing_metadata, summed from its datasources
// (each worker writes its own datasource's phase and chunk counts once per job; nothing writes
// the knowledge base's record per chunk). A knowledge base that is not running keeps what its
// last run recorded.
func liveMetadata(kb *domain.KnowledgeBase) domain.ProcessingMetadata {
	if !inProgress(kb) {
		return kb.Metadata
	}
	if kb.SourcesRun != kb.RunID {
		return domain.ProcessingMetadata{Phase: phaseExtracting, Message: "Queued: resolving the files of the knowledge base"}
	}
	var m domain.ProcessingMetadata
	files, done := 0, 0
	phase := ""
	for _, d := range kb.Sources {
		switch d.Status {
		case domain.IngestRemoved, domain.IngestUnchanged:
			continue
		case domain.IngestIngested:
			m.TotalChunks += d.Chunks
			m.ProcessedChunks += d.Chunks
			done++
		case domain.IngestFailed:
			done++
		case domain.IngestRunning:
			m.TotalChunks += d.TotalChunks
			m.ProcessedChunks += d.ProcessedChunks
			p := d.Phase
			if p == "" {
				p = phaseExtracting
			}
			if phase == "" || phaseOrder[p] < phaseOrder[phase] {
				phase = p
			}
		case domain.IngestPending:
			phase = phaseExtracting
		}
		files++
	}
	if phase == "" {
		phase = phaseIndexing // every file is done: the run is being finalised
	}
	m.Phase = phase
	switch phase {
	case phaseEmbedding:
		m.Message = fmt.Sprintf("Generating embeddings: %s/%s chunks", thousands(m.ProcessedChunks), thousands(m.TotalChunks))
	case phaseIndexing:
		m.Message = fmt.Sprintf("Indexing: %s/%s chunks", thousands(m.ProcessedChunks), thousands(m.TotalChunks))
	default:
		m.Message = fmt.Sprintf("Extracting text: %d of %d files done", done, files)
	}
	return m
}

// presentKB is the knowledge base as the views show it: a running run's processing_metadata
// summed from its datasources, and, between a sync and its start job, the previous run's
// datasources as pending (they are about to be compared with the files again).
func presentKB(kb *domain.KnowledgeBase) *domain.KnowledgeBase {
	v := *kb
	v.Metadata = liveMetadata(kb)
	if inProgress(kb) && kb.SourcesRun != kb.RunID {
		v.Sources = make(map[string]*domain.Datasource, len(kb.Sources))
		for id, d := range kb.Sources {
			c := *d
			if c.Status != domain.IngestRemoved {
				c.Status, c.Error = domain.IngestPending, ""
			}
			v.Sources[id] = &c
		}
	}
	return &v
}

// thousands writes n with comma separators ("1,250").
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// humanDuration writes a duration for messages ("1 hour", "90 minutes", "45 seconds").
func humanDuration(d time.Duration) string {
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return plural(int64(d/time.Minute), "minute")
	default:
		return plural(int64(d.Round(time.Second)/time.Second), "second")
	}
}

// sourceReason is what a datasource's error says of err: a domain error's client-safe message,
// prefixed with the stage of a stageError where the message does not say it itself; never the
// text of an unknown error ("EOF").
func sourceReason(err error) string {
	stage := ""
	var se *stageError
	if errors.As(err, &se) {
		stage = se.Stage
	}
	prefix := func(msg string) string {
		if stage == "" {
			return msg
		}
		return stage + ": " + msg
	}
	var de *domain.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return prefix("ran out of time")
	case errors.As(err, &de): // its message is client-safe by construction
		return prefix(de.Message)
	case stage == "":
		return "ingestion failed: a temporary error of the service"
	default:
		return stage + ": a temporary error of the service"
	}
}
