package librarytest

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/library"
)

// MemStore is the in-memory library.Store: the one fake of the port, held to the DynamoDB
// adapter's behaviour by StoreSuite (run against both).
type MemStore struct {
	Counts
	mu          sync.Mutex
	read        int // records read by lists and batch reads (under mu), as DynamoDB charges them
	files       map[string][]byte
	collections map[string][]byte
}

var _ library.Store = (*MemStore)(nil)

// NewMemStore returns an empty store.
func NewMemStore() *MemStore {
	return &MemStore{files: map[string][]byte{}, collections: map[string][]byte{}}
}

// Read returns how many records lists and batch reads have read, and starts again from none.
func (m *MemStore) Read() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.read
	m.read = 0
	return n
}

// Charge counts n records read by a list or batch read of a store built on this one.
func (m *MemStore) Charge(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read += n
}

// Enc is the JSON a record is kept as.
func Enc(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Dec decodes a kept record.
func Dec[T any](b []byte) *T {
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		panic(err)
	}
	return v
}

// Missing is the not-found error of a record.
func Missing(what, id string) error {
	return &domain.Error{Kind: domain.KindNotFound, Message: what + " " + id + " not found"}
}

// fits refuses a record DynamoDB would refuse for its size (400 KB an item; the keys and
// attribute names beyond the record's JSON are taken as 256 bytes), as the adapter does before
// it writes: KindTooLarge.
func fits(v any) error {
	if len(Enc(v))+256 > 400*1024 {
		return &domain.Error{Kind: domain.KindTooLarge, Message: "The data is too large to store"}
	}
	return nil
}

// MaxPage bounds the records one list page returns, as the DynamoDB adapter's MaxPage does.
const MaxPage = 1000

// Page cuts one page of company's records out of recs (kept as JSON) as the DynamoDB adapter's
// lists do: newest first (ties by id, descending), at most limit records (clamped to 1 ..
// MaxPage) strictly after the cursor after, and the cursor of the next page. A cursor is
// "<created>#<id>" of the page's last record, a position in the order (the record itself may
// be gone since); a full page carries one even when nothing follows, as a DynamoDB Query
// stopped by its Limit does, and a shorter page ends the list with "". A cursor not of that
// shape is KindInvalid.
func Page[T any](recs map[string][]byte, company, after string, limit int, key func(*T) (company string, created time.Time, id string)) ([]*T, string, error) {
	limit = min(max(limit, 1), MaxPage)
	if after != "" {
		i := strings.LastIndexByte(after, '#')
		if i < 0 || !domain.IsID(after[i+1:]) {
			return nil, "", domain.Errorf(domain.KindInvalid, "The page cursor is malformed")
		}
	}
	type entry struct {
		v   *T
		pos string
	}
	var all []entry
	for _, b := range recs {
		v := Dec[T](b)
		c, created, id := key(v)
		if c != company {
			continue
		}
		pos := created.UTC().Format("2006-01-02T15:04:05.000000000Z") + "#" + id
		if after == "" || pos < after {
			all = append(all, entry{v, pos})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].pos > all[j].pos })
	next := ""
	if len(all) >= limit {
		all, next = all[:limit], all[limit-1].pos
	}
	out := make([]*T, len(all))
	for i, e := range all {
		out[i] = e.v
	}
	return out, next, nil
}

// CreateFile implements library.Store.
func (m *MemStore) CreateFile(_ context.Context, f *domain.File) error {
	m.Add("CreateFile")
	if err := fits(f); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[f.ID]; ok {
		return &domain.Error{Kind: domain.KindConflict, Message: domain.ErrConflict.Message}
	}
	m.files[f.ID] = Enc(f)
	return nil
}

// UpdateFile implements library.Store.
func (m *MemStore) UpdateFile(_ context.Context, f *domain.File, prev time.Time) error {
	m.Add("UpdateFile")
	if err := fits(f); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[f.ID]
	if !ok {
		return Missing("File", f.ID)
	}
	if !Dec[domain.File](b).UpdatedAt.Equal(prev) {
		return &domain.Error{Kind: domain.KindConflict, Message: "The file was changed meanwhile; read it again"}
	}
	m.files[f.ID] = Enc(f)
	return nil
}

// GetFiles implements library.Store.
func (m *MemStore) GetFiles(_ context.Context, ids []string) (map[string]*domain.File, error) {
	m.Add("GetFiles")
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]*domain.File{}
	for _, id := range ids {
		if _, seen := out[id]; seen {
			continue
		}
		if b, ok := m.files[id]; ok {
			out[id] = Dec[domain.File](b)
			m.read++
		}
	}
	return out, nil
}

// GetFile implements library.Store.
func (m *MemStore) GetFile(_ context.Context, id string) (*domain.File, error) {
	m.Add("GetFile")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[id]
	if !ok {
		return nil, Missing("File", id)
	}
	return Dec[domain.File](b), nil
}

// ListFiles implements library.Store.
func (m *MemStore) ListFiles(_ context.Context, company, after string, limit int) ([]*domain.File, string, error) {
	m.Add("ListFiles")
	m.mu.Lock()
	defer m.mu.Unlock()
	out, next, err := Page(m.files, company, after, limit, func(f *domain.File) (string, time.Time, string) { return f.Company, f.CreatedAt, f.ID })
	m.read += len(out) // what DynamoDB would charge for
	return out, next, err
}

// DeleteFile implements library.Store.
func (m *MemStore) DeleteFile(_ context.Context, id string) error {
	m.Add("DeleteFile")
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, id)
	return nil
}

// PutCollection implements library.Store.
func (m *MemStore) PutCollection(_ context.Context, c *domain.Collection) error {
	m.Add("PutCollection")
	if err := fits(c); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.collections[c.ID] = Enc(c)
	return nil
}

// GetCollection implements library.Store.
func (m *MemStore) GetCollection(_ context.Context, id string) (*domain.Collection, error) {
	m.Add("GetCollection")
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.collections[id]
	if !ok {
		return nil, Missing("Collection", id)
	}
	return Dec[domain.Collection](b), nil
}

// ListCollections implements library.Store.
func (m *MemStore) ListCollections(_ context.Context, company, after string, limit int) ([]*domain.Collection, string, error) {
	m.Add("ListCollections")
	m.mu.Lock()
	defer m.mu.Unlock()
	out, next, err := Page(m.collections, company, after, limit, func(c *domain.Collection) (string, time.Time, string) { return c.Company, c.CreatedAt, c.ID })
	m.read += len(out)
	return out, next, err
}

// DeleteCollection implements library.Store.
func (m *MemStore) DeleteCollection(_ context.Context, id string) error {
	m.Add("DeleteCollection")
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.collections, id)
	return nil
}

// UpdateCollection implements library.Store.
func (m *MemStore) UpdateCollection(_ context.Context, c *domain.Collection, prev time.Time) error {
	m.Add("UpdateCollection")
	if err := fits(c); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.collections[c.ID]
	if !ok {
		return Missing("Collection", c.ID)
	}
	if !Dec[domain.Collection](b).UpdatedAt.Equal(prev) {
		return &domain.Error{Kind: domain.KindConflict, Message: "The collection was changed meanwhile; read it again"}
	}
	m.collections[c.ID] = Enc(c)
	return nil
}
