// Package mcpserverstest holds the in-memory fake of mcpservers.Store for the tests of the
// feature and of the handlers built on it, and StoreSuite, the port's contract that the fake and
// the DynamoDB adapter (shared/dynamo's suite tests, on DynamoDB Local) both pass: names unique
// in a company, writes and deletes conditional on UpdatedAt, a bound on the servers of a
// company, companies kept apart. The fake counts reads and can fail every call (Fail).
package mcpserverstest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentorch/agentorch/shared/domain"
)

// Store keeps servers by company and id.
type Store struct {
	mu      sync.Mutex
	servers map[string]*domain.MCPServer // by company + "/" + id
	// Fail is returned by every call when set.
	Fail error
	// Lists and Finds count ListMCPServers and FindMCPServers calls.
	Lists, Finds int
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{servers: map[string]*domain.MCPServer{}} }

func (f *Store) nameTaken(s *domain.MCPServer) bool {
	for _, o := range f.servers {
		if o.Company == s.Company && o.Name == s.Name && o.ID != s.ID {
			return true
		}
	}
	return false
}

// clone is s as DynamoDB gives it back: no memory shared with the caller, a schema's numbers
// json.Number, empty header names and tools as empty slices, empty sealed headers nil.
func clone(s *domain.MCPServer) *domain.MCPServer {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var c domain.MCPServer
	if err := dec.Decode(&c); err != nil {
		panic(err)
	}
	if c.HeaderNames == nil {
		c.HeaderNames = []string{}
	}
	if c.Tools == nil {
		c.Tools = []domain.MCPTool{}
	}
	if len(c.SealedHeaders) == 0 {
		c.SealedHeaders = nil
	}
	return &c
}

// fits refuses a server DynamoDB would refuse for its size (400 KB an item; the keys and
// attribute names beyond the record's JSON are taken as 256 bytes), as the adapter does before
// it writes: KindTooLarge.
func fits(s *domain.MCPServer) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if len(b)+256 > 400*1024 {
		return &domain.Error{Kind: domain.KindTooLarge, Message: "The data is too large to store"}
	}
	return nil
}

// CreateMCPServer implements mcpservers.Store.
func (f *Store) CreateMCPServer(_ context.Context, s *domain.MCPServer, max int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return f.Fail
	}
	if err := fits(s); err != nil {
		return err
	}
	if f.nameTaken(s) {
		return fmt.Errorf("name %q: %w", s.Name, domain.ErrMCPNameTaken)
	}
	n := 0
	for _, o := range f.servers {
		if o.Company == s.Company {
			n++
		}
	}
	if n >= max {
		return fmt.Errorf("servers of %s: %w", s.Company, domain.ErrMCPLimit)
	}
	if _, ok := f.servers[s.Company+"/"+s.ID]; ok {
		return fmt.Errorf("create MCP server %s: %w", s.ID, domain.ErrConflict)
	}
	f.servers[s.Company+"/"+s.ID] = clone(s)
	return nil
}

// GetMCPServer implements mcpservers.Store.
func (f *Store) GetMCPServer(_ context.Context, company, id string) (*domain.MCPServer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return nil, f.Fail
	}
	s, ok := f.servers[company+"/"+id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return clone(s), nil
}

// ListMCPServers implements mcpservers.Store.
func (f *Store) ListMCPServers(_ context.Context, company string) ([]*domain.MCPServer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Lists++
	if f.Fail != nil {
		return nil, f.Fail
	}
	var out []*domain.MCPServer
	for _, s := range f.servers {
		if s.Company == company {
			out = append(out, clone(s))
		}
	}
	return out, nil
}

// FindMCPServers implements mcpservers.Store: the company's servers whose id or name is a ref.
func (f *Store) FindMCPServers(_ context.Context, company string, refs []string) ([]*domain.MCPServer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Finds++
	if f.Fail != nil {
		return nil, f.Fail
	}
	ids, names := map[string]bool{}, map[string]bool{}
	for _, r := range refs {
		switch {
		case r == "":
		case domain.IsID(r):
			ids[r] = true // as the adapter: a UUID is read as an id, never as a name
		default:
			names[r] = true
		}
	}
	var out []*domain.MCPServer
	for _, s := range f.servers {
		if s.Company == company && (ids[s.ID] || names[s.Name]) {
			out = append(out, clone(s))
		}
	}
	return out, nil
}

// UpdateMCPServer implements mcpservers.Store.
func (f *Store) UpdateMCPServer(_ context.Context, s, prev *domain.MCPServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return f.Fail
	}
	if err := fits(s); err != nil {
		return err
	}
	cur, ok := f.servers[prev.Company+"/"+prev.ID]
	switch {
	case !ok:
		return domain.ErrNotFound
	case !cur.UpdatedAt.Equal(prev.UpdatedAt):
		return domain.ErrConflict
	case f.nameTaken(s):
		return fmt.Errorf("name %q: %w", s.Name, domain.ErrMCPNameTaken)
	}
	f.servers[s.Company+"/"+s.ID] = clone(s)
	return nil
}

// DeleteMCPServer implements mcpservers.Store: as the adapter, only a server unchanged since s
// was read (its UpdatedAt) is deleted; a changed one is a conflict.
func (f *Store) DeleteMCPServer(_ context.Context, s *domain.MCPServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return f.Fail
	}
	cur, ok := f.servers[s.Company+"/"+s.ID]
	switch {
	case !ok:
		return domain.ErrNotFound
	case !cur.UpdatedAt.Equal(s.UpdatedAt):
		return domain.ErrConflict
	}
	delete(f.servers, s.Company+"/"+s.ID)
	return nil
}

// Len is the number of servers stored, of every company.
func (f *Store) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.servers)
}
