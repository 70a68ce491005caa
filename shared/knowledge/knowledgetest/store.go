// Package knowledgetest holds the in-memory fake of knowledge.Store for the tests of the
// knowledge feature, and StoreSuite, the contract of the port's knowledge bases that the fake
// and the DynamoDB adapter (shared/dynamo's suite tests, on DynamoDB Local) both pass, so that
// the fake cannot drift from DynamoDB's conditions, paging and item-size account.
package knowledgetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/library/librarytest"
)

// The DynamoDB adapter's bounds on a knowledge base's item: DynamoDB's 400 KB, the most one
// datasource may weigh, and the room a full write keeps free for one more (kbsources.go).
const (
	maxItemBytes   = 400 * 1024
	maxSourceBytes = 4096
	roomReserve    = maxSourceBytes + 2*9
	// itemOverhead stands for the item's keys and attribute names beyond the record's JSON.
	itemOverhead = 256
)

// Store is the in-memory knowledge.Store: the library's fake (files, collections) with
// knowledge bases. Each knowledge base keeps the adapter's room account (in, out): a datasource
// that grows the record is written only while room is left, so the fake refuses what DynamoDB
// refuses.
type Store struct {
	*librarytest.MemStore
	kbMu  sync.Mutex
	kbs   map[string][]byte
	rooms map[string]*room
}

// room is a knowledge base's account of the bytes left for datasources (see kbsources.go).
type room struct{ in, out int }

var _ knowledge.Store = (*Store)(nil)

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{MemStore: librarytest.NewMemStore(), kbs: map[string][]byte{}, rooms: map[string]*room{}}
}

// sourceRecord is a datasource as the adapter measures it: the JSON of its entry.
type sourceRecord struct {
	Name            string     `json:"name"`
	Status          string     `json:"status"`
	Error           string     `json:"error,omitempty"`
	ContentHash     string     `json:"content_hash,omitempty"`
	Chunks          int        `json:"chunks"`
	Attempts        int        `json:"attempts"`
	Phase           string     `json:"phase,omitempty"`
	TotalChunks     int        `json:"total_chunks,omitempty"`
	ProcessedChunks int        `json:"processed_chunks,omitempty"`
	Residue         bool       `json:"residue,omitempty"`
	UpdatedAt       *time.Time `json:"updated_at,omitempty"`
}

// weigh is the length of d's JSON and its weight in the item: no less than the bytes its
// entry takes, as the adapter counts them.
func weigh(id string, d *domain.Datasource) (js, w int) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	r := sourceRecord{Name: d.Name, Status: d.Status, Error: d.Error, ContentHash: d.ContentHash, Chunks: d.Chunks, Attempts: d.Attempts,
		Phase: d.Phase, TotalChunks: d.TotalChunks, ProcessedChunks: d.ProcessedChunks, Residue: d.Residue, UpdatedAt: d.UpdatedAt}
	if err := enc.Encode(r); err != nil {
		panic(err)
	}
	js = b.Len() - 1
	return js, 1 + len(id) + 3 + 1 + js + 1 + 5
}

// normal is kb as DynamoDB gives it back: a sources map always, no nil datasources, each
// datasource's FileID its key.
func normal(kb *domain.KnowledgeBase) *domain.KnowledgeBase {
	cp := *kb
	cp.Sources = make(map[string]*domain.Datasource, len(kb.Sources))
	for id, d := range kb.Sources {
		if d != nil {
			dc := *d
			dc.FileID = id
			cp.Sources[id] = &dc
		}
	}
	return &cp
}

// measure is the room a full write of kb leaves (the adapter's openRoom), or a KindTooLarge
// error for an item DynamoDB would refuse.
func measure(kb *domain.KnowledgeBase) (*room, error) {
	rest := *kb
	rest.Sources = nil
	used := itemOverhead + len(kb.RunID) + len(kb.Company) + len(librarytest.Enc(&rest))
	for id, d := range kb.Sources {
		_, w := weigh(id, d)
		used += w
	}
	if used > maxItemBytes {
		return nil, tooLarge()
	}
	return &room{in: maxItemBytes - roomReserve - used}, nil
}

func tooLarge() error {
	return &domain.Error{Kind: domain.KindTooLarge, Message: "The data is too large to store"}
}

func superseded() error {
	return &domain.Error{Kind: domain.KindConflict, Message: "The knowledge base's run was superseded"}
}

// PutKB implements knowledge.Store.
func (m *Store) PutKB(_ context.Context, kb *domain.KnowledgeBase) error {
	m.Add("PutKB")
	kb = normal(kb)
	r, err := measure(kb)
	if err != nil {
		return err
	}
	m.kbMu.Lock()
	defer m.kbMu.Unlock()
	m.kbs[kb.ID], m.rooms[kb.ID] = librarytest.Enc(kb), r
	return nil
}

// GetKB implements knowledge.Store.
func (m *Store) GetKB(_ context.Context, id string) (*domain.KnowledgeBase, error) {
	m.Add("GetKB")
	m.kbMu.Lock()
	defer m.kbMu.Unlock()
	b, ok := m.kbs[id]
	if !ok {
		return nil, librarytest.Missing("Knowledge base", id)
	}
	return normal(librarytest.Dec[domain.KnowledgeBase](b)), nil
}

// ListKBs implements knowledge.Store.
func (m *Store) ListKBs(_ context.Context, company, after string, limit int) ([]*domain.KnowledgeBase, string, error) {
	m.Add("ListKBs")
	m.kbMu.Lock()
	defer m.kbMu.Unlock()
	out, next, err := librarytest.Page(m.kbs, company, after, limit, func(kb *domain.KnowledgeBase) (string, time.Time, string) {
		return kb.Company, kb.CreatedAt, kb.ID
	})
	for i, kb := range out {
		out[i] = normal(kb)
	}
	m.Charge(len(out))
	return out, next, err
}

// DeleteKB implements knowledge.Store.
func (m *Store) DeleteKB(_ context.Context, id string) error {
	m.Add("DeleteKB")
	m.kbMu.Lock()
	defer m.kbMu.Unlock()
	delete(m.kbs, id)
	delete(m.rooms, id)
	return nil
}

// UpdateKB implements knowledge.Store.
func (m *Store) UpdateKB(_ context.Context, kb *domain.KnowledgeBase, runID string) error {
	m.Add("UpdateKB")
	kb = normal(kb)
	r, err := measure(kb)
	if err != nil {
		return err
	}
	m.kbMu.Lock()
	defer m.kbMu.Unlock()
	b, ok := m.kbs[kb.ID]
	if !ok {
		return librarytest.Missing("Knowledge base", kb.ID)
	}
	if librarytest.Dec[domain.KnowledgeBase](b).RunID != runID {
		return superseded()
	}
	m.kbs[kb.ID], m.rooms[kb.ID] = librarytest.Enc(kb), r
	return nil
}

// UpdateSource implements knowledge.Store with the adapter's conditions: the run still current,
// and room left in the item or a datasource that does not grow it.
func (m *Store) UpdateSource(_ context.Context, kbID, runID string, d *domain.Datasource) (*domain.KnowledgeBase, error) {
	m.Add("UpdateSource")
	if d == nil || d.FileID == "" {
		return nil, errors.New("update datasource: no file id")
	}
	js, w := weigh(d.FileID, d)
	if w > maxSourceBytes {
		return nil, tooLarge()
	}
	m.kbMu.Lock()
	defer m.kbMu.Unlock()
	b, ok := m.kbs[kbID]
	if !ok {
		return nil, librarytest.Missing("Knowledge base", kbID)
	}
	kb := normal(librarytest.Dec[domain.KnowledgeBase](b))
	if kb.RunID != runID {
		return nil, superseded()
	}
	r, oldW := m.rooms[kbID], 0
	old := kb.Sources[d.FileID]
	oldJS := -1
	if old != nil {
		oldJS, oldW = weigh(d.FileID, old)
	}
	if r.in < r.out && oldJS < js {
		return nil, tooLarge()
	}
	cp := *d
	kb.Sources[d.FileID] = &cp
	kb.UpdatedAt = time.Now().UTC()
	if d.UpdatedAt != nil {
		kb.UpdatedAt = *d.UpdatedAt
	}
	r.out += w
	r.in += oldW
	m.kbs[kbID] = librarytest.Enc(kb)
	return normal(librarytest.Dec[domain.KnowledgeBase](m.kbs[kbID])), nil
}
