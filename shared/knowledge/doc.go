// Package knowledge holds the use cases of knowledge bases: built from a company's files and
// collections (shared/library, the layer below: this package reads them there, and the library
// tells it of a file's deletion first), ingested in the background (extract → chunk → embed →
// index, one SQS job per file) and searched. The Service serves the library's use cases too, so
// the composition root builds one. This part describes the knowledge bases, their ingestion and
// their search (kbs.go, kbinput.go, jobs.go, ingest.go, runs.go, tokens.go, search.go); ports.go
// names the interfaces the feature runs on, which the adapters (dynamo, s3, sqs, vectors,
// embeddings) implement in domain terms.
//
// # States
//
// A knowledge base goes pending → running → completed | failed:
//
//   - pending: created; its first run is queued (POST answers 201 with it).
//   - running: its start job resolved the files (or a sync started a new run); files are being
//     extracted, chunked, embedded and indexed. progress is the share of datasources done;
//     processing_metadata sums the datasources' phase and chunk counts (phase extracting,
//     embedding, indexing; message "Generating embeddings: 562/1,250 chunks").
//   - completed: every datasource reached a terminal status and at least one is ingested or
//     unchanged; failures are listed in failed_datasources and datasource_errors.
//   - failed: none could be ingested, the knowledge base has no files, or the run could not
//     proceed (Error says why). A knowledge base that completed once stays searchable with the
//     chunks of its last good run.
//
// Sync (POST …/sync/) moves completed or failed back to running with a new run id; a sync while
// a run is in progress supersedes that run (its workers' writes conflict with the new run id and
// they stop). Delete marks the run deleted (run id "deleted:…"), deletes the chunks, then the
// record; workers that find their knowledge base gone or marked delete what they indexed.
//
// A datasource (one file of the knowledge base, by file id) is pending (queued), running (a
// worker is on it; attempts counts the deliveries of its current job — a continuation starts
// again from 1 — error holds the last attempt's error), ingested (its chunks are indexed), unchanged (a sync found the same content hash and
// kept its chunks), failed (error says why, in words a user can act on: "no text could be
// extracted from this PDF (scanned or image-only?)…") or removed (the file left the knowledge
// base or was deleted; its chunks are gone). Files are uploading, active, archived (ingested,
// but no search finds them) or error (see domain); a file still uploading or in error is a
// failed datasource. Collections are pending while empty or while a file is uploading,
// completed when every file is stored, failed when a file is in error (derived on read).
//
// # Jobs
//
// The ingestion queue carries JSON jobs that only this package writes and reads:
//
//   - start {kb_id, run_id}: resolves the run's datasources — the files of its collections and
//     its selected files, once each, archived ones included — and compares them with the last
//     run's by content hash (and by whether they were embedded with contextual headers, as the
//     knowledge base's chunking_strategy now says): unchanged ones are skipped, removed ones
//     have their chunks deleted, new and changed ones become pending with one file job each, so
//     files proceed in parallel. With nothing pending the run ends at once.
//   - file {kb_id, run_id, file_id, from}: reads the file, extracts its text, chunks it (chunks
//     over the embedder's token limit are cut at word boundaries into near-equal pieces, never
//     truncated; with contextual_headers each is embedded after "<file> — <section heading>",
//     clipped to what the chunk leaves of the limit, its stored text its own: context.go),
//     deletes the file's old chunks (first job only), embeds chunks [from,
//     from+ChunksPerJob) in batches of EmbedBatch and indexes each batch (up to 500 chunks a
//     Put) while the next is embedded. While each batch after the first embeds, it reads the
//     knowledge base again: deleted, synced, or its file gone, the job stops there (and deletes
//     what it indexed where the file or the knowledge base left). A file over MaxFileChunks
//     (10,000) chunks fails; so does one that would take its run's files past MaxKBChunks
//     (200,000) together: its first job checks the sum of the others' chunks, counting a file
//     whose count is unknown at MaxFileChunks, and only when that bound does not fit records its
//     own count and decides on the counts recorded before it.
//     If chunks remain, it queues a continuation job for them: one job embeds at most
//     ChunksPerJob chunks (default 2,000; at the local model's ~100 chunks a second well under
//     a minute, far within Lambda's 15 minutes), whatever the file's size. The job that leaves
//     no datasource pending or running finalises the run: it refreshes the index (every chunk
//     is searchable when the status says completed) and sets the status.
//
// A retryable error (internal, overloaded, rate limited) is recorded as the datasource's last
// error and returned: SQS delivers the job again after the visibility timeout. After three
// deliveries the job goes to the dead-letter queue, whose handler records the datasource failed
// with "ingestion failed after N attempts: <last error>". A permanent error fails the
// datasource at once (its partial chunks deleted).
//
// # Deadlines and status_updated
//
// RunDeadline (default 1 hour, past every redelivery of every job: three deliveries of at most
// 16 minutes each) bounds a run: a read (get, list, check_status, search) that finds a run past
// it settles the run as failed ("ingestion did not finish within 1 hour; run sync to retry"),
// its open datasources failed, and a new run id stops any late worker. Nothing stays running
// for ever. check_status's status_updated is true when the status changed within the last
// StatusWindow (default 60 seconds).
//
// # Costs
//
// Store calls per ingested file of up to EmbedBatch chunks: 2 GetKB, 1 GetFile, 2 UpdateSource
// (one more when the file needs more than one embedding batch or its run nears MaxKBChunks; one
// more GetKB per further batch); per run: 1 GetKB, 2 GetCollection per collection (at the start,
// and at the end: a collection deleted meanwhile takes its files out of the run), 1 GetFiles of
// the candidate files (a batch read per 100) and 2 UpdateKB. Index calls per such file: 1 Put (at
// most one more per further batch), and 1 DeleteFile first when the index may hold chunks of it
// from an earlier run (a changed file in a sync, or a retried attempt); 1
// Refresh per run. A search: 1 GetKB, 1 GetFiles of the knowledge base's searchable files, 1
// embedding and 1 index search. TestIngestCalls and TestSearchCalls measure these. Nothing on a
// request's path reads a company's whole list: lists read their page (collect), and the rare
// operations that must look at every collection or knowledge base of a company (a file's delete)
// page through them.
package knowledge
