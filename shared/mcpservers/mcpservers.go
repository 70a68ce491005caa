// Package mcpservers holds the use cases of a company's registered remote MCP servers: register
// (connecting once to read the tools), read, list, change, delete, re-read the tools, and, for
// the engine's tool binding, resolve a configuration's references to servers and their
// endpoints. Header values are secrets: sealed before they are stored, opened only for a
// connection, never returned.
package mcpservers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/shared/audit"
	"github.com/agentorch/agentorch/shared/domain"
)

// Store keeps the servers of each company together, so that one Query reads them all.
type Store interface {
	// CreateMCPServer stores a new server; a name the company already uses is an error wrapping
	// domain.ErrMCPNameTaken, a company with max servers already one wrapping domain.ErrMCPLimit.
	CreateMCPServer(ctx context.Context, s *domain.MCPServer, max int) error
	// GetMCPServer reads a company's server by id; another company's is not found.
	GetMCPServer(ctx context.Context, company, id string) (*domain.MCPServer, error)
	// ListMCPServers reads every server of a company (one Query per 1 MB), in any order.
	ListMCPServers(ctx context.Context, company string) ([]*domain.MCPServer, error)
	// FindMCPServers reads the servers of a company that refs name (by id or by name) and no
	// others; a ref that names none is absent from the result.
	FindMCPServers(ctx context.Context, company string, refs []string) ([]*domain.MCPServer, error)
	// UpdateMCPServer replaces prev by s if it is unchanged since read (its UpdatedAt): a
	// changed one is a conflict, a deleted one not found, a taken new name domain.ErrMCPNameTaken.
	UpdateMCPServer(ctx context.Context, s, prev *domain.MCPServer) error
	// DeleteMCPServer removes the server and its name; a missing one is not found.
	DeleteMCPServer(ctx context.Context, s *domain.MCPServer) error
}

// Sealer encrypts header values at rest (seal.Box); aad binds a sealed value to its record.
type Sealer interface {
	Seal(ctx context.Context, plain, aad []byte) ([]byte, error)
	Open(ctx context.Context, sealed, aad []byte) ([]byte, error)
}

// MaxServersPerCompany bounds the servers a company may register: a registration past it is a
// 409 naming the limit.
const MaxServersPerCompany = 50

// RegisterBudget bounds the connection of a registration, a change or a refresh (initialize and
// every page of tools/list), within API Gateway's 30 s.
const RegisterBudget = 20 * time.Second

// Service implements the MCP-server use cases.
type Service struct {
	store Store
	conn  domain.MCPConnector
	seal  Sealer
	now   func() time.Time
	names nameIDs        // the ids of names resolved before
	audit audit.Recorder // nil: servers cannot be created, changed or deleted (WithAudit)
	// oauth speaks OAuth 2.1 to servers registered with auth (nil: none may be, WithOAuth);
	// redirectURL is where their authorizations come back by default.
	oauth       OAuth
	redirectURL string
}

// New builds the service.
func New(store Store, conn domain.MCPConnector, sealer Sealer) *Service {
	return &Service{store: store, conn: conn, seal: sealer, now: time.Now}
}

// WithAudit makes s record the servers callers register, change and delete. Without it those
// calls fail before they change anything: no server changes unrecorded.
func (s *Service) WithAudit(r audit.Recorder) *Service {
	s.audit = r
	return s
}

// errNoAudit refuses an audited action of a service built without its recorder.
var errNoAudit = errors.New("audit recorder not configured: refusing an unrecorded change")

// Create registers a server for p's company: it connects once (initialize, tools/list) and
// stores the server with its tools. A server that cannot be used is a 400 naming the reason, and
// nothing is stored.
func (s *Service) Create(ctx context.Context, p domain.Principal, in CreateInput) (*domain.MCPServer, error) {
	if s.audit == nil {
		return nil, errNoAudit
	}
	if errs := in.Validate(); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	now := s.now().UTC()
	srv := &domain.MCPServer{ID: uuid.NewString(), Company: p.Company, CreatedBy: p.KeyID, Name: *in.Name, URL: *in.URL,
		Description: in.Description, CreatedAt: now, UpdatedAt: now}
	if in.TimeoutMS != nil {
		srv.TimeoutMS = *in.TimeoutMS
	}
	if err := s.setHeaders(ctx, srv, in.Headers); err != nil {
		return nil, err
	}
	if in.Auth != nil {
		if err := s.createWithAuth(ctx, srv, in); err != nil {
			return nil, err
		}
	} else if err := s.connect(ctx, srv, in.Headers); err != nil {
		return nil, err
	}
	if err := s.store.CreateMCPServer(ctx, srv, MaxServersPerCompany); err != nil {
		return nil, storeErr("register MCP server", srv.Name, err)
	}
	if err := s.audit.Record(ctx, p, audit.MCPServerCreated, srv.ID); err != nil {
		return nil, err
	}
	return srv, nil
}

// Get reads one of p's company's servers.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (*domain.MCPServer, error) {
	if uuid.Validate(id) != nil {
		return nil, notFound(id) // ids are UUIDs; anything else would only reach the store to miss
	}
	srv, err := s.store.GetMCPServer(ctx, p.Company, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("get MCP server %s: %w", id, err)
	}
	return srv, nil
}

// List is a page of p's company's servers, newest first, and whether more follow.
func (s *Service) List(ctx context.Context, p domain.Principal, offset, limit int) ([]*domain.MCPServer, bool, error) {
	all, err := s.store.ListMCPServers(ctx, p.Company)
	if err != nil {
		return nil, false, fmt.Errorf("list MCP servers: %w", err)
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].CreatedAt.Equal(all[j].CreatedAt) {
			return all[i].CreatedAt.After(all[j].CreatedAt)
		}
		return all[i].ID < all[j].ID
	})
	if offset >= len(all) {
		return []*domain.MCPServer{}, false, nil
	}
	end := min(offset+limit, len(all))
	return all[offset:end], end < len(all), nil
}

// Update changes a server. A new url or new headers connect again first; a server that then
// cannot be used is a 400 and nothing changes.
func (s *Service) Update(ctx context.Context, p domain.Principal, id string, in UpdateInput) (*domain.MCPServer, error) {
	if s.audit == nil {
		return nil, errNoAudit
	}
	if errs := in.Validate(); len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	prev, err := s.Get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	srv := *prev
	if in.Name.Set {
		srv.Name = in.Name.Value
	}
	if in.Description.Set {
		srv.Description = in.Description.Value
	}
	if in.TimeoutMS.Set {
		srv.TimeoutMS = in.TimeoutMS.Value
	}
	reconnect := false
	if in.URL.Set && in.URL.Value != prev.URL {
		// Stored headers were given for the old URL only: a new one never sees them, not even
		// to be checked. The change must say which headers go to the new URL (null: none).
		if len(prev.SealedHeaders) > 0 && !in.Headers.Set {
			return nil, domain.Invalid([]domain.FieldError{{Field: "headers",
				Message: "are required with a new url: the stored headers are sent only to the URL they were given for; send them again, or null for none"}})
		}
		srv.URL, reconnect = in.URL.Value, true
		if prev.Auth != nil {
			// Tokens are for the resource they were asked for: a new URL is authorized anew.
			if err := s.resetAuth(ctx, &srv); err != nil {
				return nil, err
			}
		}
	}
	headers := in.Headers.Value
	if in.Headers.Set {
		reconnect = true
		if err := s.setHeaders(ctx, &srv, headers); err != nil {
			return nil, err
		}
	} else if reconnect {
		if headers, err = s.headers(ctx, prev); err != nil {
			return nil, err
		}
	}
	if reconnect && !needsPerson(&srv) {
		if err := s.connect(ctx, &srv, headers); err != nil {
			return nil, err
		}
	}
	srv.UpdatedAt = s.later(prev.UpdatedAt)
	if err := s.store.UpdateMCPServer(ctx, &srv, prev); err != nil {
		return nil, storeErr("update MCP server", srv.Name, err)
	}
	if err := s.audit.Record(ctx, p, audit.MCPServerUpdated, srv.ID); err != nil {
		return nil, err
	}
	return &srv, nil
}

// Delete removes a server. Agent configurations that bind it fail their next run's binding.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	if s.audit == nil {
		return errNoAudit
	}
	srv, err := s.Get(ctx, p, id)
	if err != nil {
		return err
	}
	if err := s.store.DeleteMCPServer(ctx, srv); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return notFound(id)
		}
		return fmt.Errorf("delete MCP server %s: %w", id, err)
	}
	return s.audit.Record(ctx, p, audit.MCPServerDeleted, srv.ID)
}

// Refresh reads the server's tools again. A server that cannot be used now is not a failed
// request: the record answers with status error and last_error (its tools as last read stay);
// a working one is active with the new tools.
func (s *Service) Refresh(ctx context.Context, p domain.Principal, id string) (*domain.MCPServer, error) {
	prev, err := s.Get(ctx, p, id)
	if err != nil {
		return nil, err
	}
	headers, err := s.headers(ctx, prev)
	if err != nil {
		return nil, err
	}
	srv := *prev
	if err := s.connect(ctx, &srv, headers); err != nil {
		if srv.Status, srv.LastError, err = failedConnect(err); err != nil {
			return nil, err
		}
	}
	srv.UpdatedAt = s.later(prev.UpdatedAt)
	if err := s.store.UpdateMCPServer(ctx, &srv, prev); err != nil {
		return nil, storeErr("refresh MCP server", srv.Name, err)
	}
	return &srv, nil
}

// later is now, or just after prev when the clock has not moved past it, so that every write
// changes UpdatedAt (the store's optimistic lock).
func (s *Service) later(prev time.Time) time.Time {
	now := s.now().UTC()
	if !now.After(prev) {
		now = prev.Add(time.Microsecond)
	}
	return now
}

// aad binds sealed headers to their company and server.
func aad(srv *domain.MCPServer) []byte {
	return []byte("mcp-server\x00" + srv.Company + "\x00" + srv.ID)
}

// setHeaders seals headers into srv (none: nil) and lists their names.
func (s *Service) setHeaders(ctx context.Context, srv *domain.MCPServer, h map[string]string) error {
	srv.HeaderNames = slices.Sorted(maps.Keys(h))
	srv.SealedHeaders = nil
	if len(h) == 0 {
		srv.HeaderNames = []string{}
		return nil
	}
	plain, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode headers: %w", err)
	}
	if srv.SealedHeaders, err = s.seal.Seal(ctx, plain, aad(srv)); err != nil {
		return fmt.Errorf("seal headers of MCP server %s: %w", srv.ID, err)
	}
	return nil
}

// headers opens a server's headers.
func (s *Service) headers(ctx context.Context, srv *domain.MCPServer) (map[string]string, error) {
	h := map[string]string{}
	if len(srv.SealedHeaders) == 0 {
		return h, nil
	}
	plain, err := s.seal.Open(ctx, srv.SealedHeaders, aad(srv))
	if err != nil {
		return nil, fmt.Errorf("open headers of MCP server %s: %w", srv.ID, err)
	}
	if err := json.Unmarshal(plain, &h); err != nil {
		return nil, fmt.Errorf("decode headers of MCP server %s: %w", srv.ID, err)
	}
	return h, nil
}

// connect reads the server's tools into srv (status active). A server failing as an MCP server
// is a 400 on url naming the reason; other failures are returned as they are.
func (s *Service) connect(ctx context.Context, srv *domain.MCPServer, headers map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, RegisterBudget)
	defer cancel()
	ep, err := s.endpoint(ctx, srv, headers, false)
	if err != nil {
		return err
	}
	tools, err := s.conn.ListTools(ctx, ep)
	if sa, ok := ep.Auth.(*storedAuth); ok && sa.renewed {
		// A token renewed on the way (a rotated refresh token among them) goes with the record.
		if err := s.sealGrant(ctx, srv, sa.g); err != nil {
			return err
		}
	}
	var me *domain.MCPError
	if errors.As(err, &me) {
		return unusable(me.Reason, err)
	}
	if err != nil {
		return fmt.Errorf("list tools of MCP server %s: %w", srv.ID, err)
	}
	if tools == nil {
		tools = []domain.MCPTool{}
	}
	if reason := toolsProblem(tools); reason != "" {
		return unusable(reason, nil)
	}
	srv.Tools, srv.ToolsAt = tools, s.now().UTC()
	srv.Status, srv.LastError = domain.MCPStatusActive, ""
	return nil
}

// unusable is the 400 on url of a server that cannot be used, for reason; a refresh keeps the
// reason as the record's last_error.
func unusable(reason string, err error) error {
	msg := "the MCP server could not be used: " + reason
	return &domain.Error{Kind: domain.KindInvalid, Message: "url: " + msg,
		Fields: []domain.FieldError{{Field: "url", Message: msg}}, Err: err}
}

// connectReason is what a failed connection says on the record (last_error).
func connectReason(err error) string {
	var e *domain.Error
	if errors.As(err, &e) && len(e.Fields) > 0 {
		return e.Fields[0].Message
	}
	return "the MCP server could not be used"
}

// endpoint is how to reach srv with the given headers.
func endpoint(srv *domain.MCPServer, headers map[string]string) domain.MCPEndpoint {
	t := srv.TimeoutMS
	if t == 0 {
		t = DefaultTimeoutMS
	}
	return domain.MCPEndpoint{URL: srv.URL, Headers: headers, Timeout: time.Duration(t) * time.Millisecond}
}

func notFound(ref string) error {
	return domain.Errorf(domain.KindNotFound, "MCP server %s not found", domain.Clip(ref, 80))
}

// storeErr wraps a store failure, a taken name as the 409 that names it.
func storeErr(op, name string, err error) error {
	switch {
	case errors.Is(err, domain.ErrMCPNameTaken):
		return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf("An MCP server named %q exists in your company", name), Err: err}
	case errors.Is(err, domain.ErrMCPLimit):
		return &domain.Error{Kind: domain.KindConflict, Message: fmt.Sprintf(
			"Your company has %d MCP servers, the most it may register; delete one before registering another", MaxServersPerCompany), Err: err}
	case domain.KindOf(err) == domain.KindNotFound:
		return domain.Errorf(domain.KindNotFound, "MCP server %q not found", name)
	}
	return fmt.Errorf("%s %s: %w", op, name, err)
}
