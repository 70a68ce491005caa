package domain

import (
	"sort"
	"strings"
	"unicode"
)

// What reads of knowledge records derive from them: never stored, computed from the record and
// the files it names on every read.

// DatasourceType is the type of every datasource of a knowledge base: an uploaded file.
const DatasourceType = "file-upload"

// FileDeleted is the file status a datasource shows once its file is gone.
const FileDeleted = "deleted"

// LiveSources lists the file ids of the datasources of the run that were not removed, sorted.
func (kb *KnowledgeBase) LiveSources() []string {
	ids := make([]string, 0, len(kb.Sources))
	for id, d := range kb.Sources {
		if d.Status != IngestRemoved {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// Ingested reports whether the datasource's chunks are indexed: ingested by the run, or kept
// by a sync that found its content unchanged.
func (d *Datasource) Ingested() bool {
	return d.Status == IngestIngested || d.Status == IngestUnchanged
}

// SourceStatus is the status of the file behind a datasource: the file's own among files (by
// id), or FileDeleted when it is not there.
func SourceStatus(files map[string]*File, id string) string {
	if f := files[id]; f != nil {
		return f.Status
	}
	return FileDeleted
}

// CollectionSummary is what a collection's files make of it.
type CollectionSummary struct {
	Status   string // Collection*
	Progress int    // share of its files that are stored, 0–100
	Files    int    // data_source_count
	Size     int64  // total_size
}

// SummarizeCollection derives a collection's status, progress and counts from those of its
// files that still exist:
//   - pending: the collection is empty, or a file in it is still uploading (a presigned upload
//     not yet completed); progress is the share of its files that are stored;
//   - completed: every file is stored (active or archived); progress 100;
//   - failed: a file in it is in error (a presigned upload that could not be completed; the
//     file's record says why); this wins over pending.
//
// `running` (listed by the public API) is never reported: a collection does no processing of
// its own; its files are ingested by the knowledge bases built from it. Files and Size count
// the files and their bytes (an uploading file counts with the size its upload was started for).
func SummarizeCollection(files []*File) CollectionSummary {
	s := CollectionSummary{Status: CollectionPending}
	var settled int
	var uploading, failed bool
	for _, f := range files {
		s.Files++
		s.Size += f.Size
		switch f.Status {
		case FileUploading:
			uploading = true
		case FileError:
			failed = true
			settled++
		default:
			settled++
		}
	}
	if s.Files == 0 {
		return s
	}
	s.Progress = settled * 100 / s.Files
	switch {
	case failed:
		s.Status = CollectionFailed
	case !uploading:
		s.Status = CollectionCompleted
	}
	return s
}

// NormalizeName is the snake_case form of a name: lowercase letters and digits, every other run
// of characters one underscore ("Product Docs (v2)" → "product_docs_v2").
func NormalizeName(name string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			sep = false
		} else {
			sep = true
		}
	}
	return b.String()
}
