package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/agentorch/agentorch/shared/agents"
	"github.com/agentorch/agentorch/shared/domain"
)

// AgentService is what the agents group calls; agents.Service is the implementation.
type AgentService interface {
	Validate(ctx context.Context, p domain.Principal, cfg domain.ConfigDoc, prefix string) ([]domain.FieldError, error)
	Create(ctx context.Context, p domain.Principal, in agents.CreateInput) (*domain.Agent, error)
	Get(ctx context.Context, p domain.Principal, id string) (*domain.Agent, error)
	List(ctx context.Context, p domain.Principal, offset, limit int) ([]*domain.Agent, bool, error)
	Update(ctx context.Context, p domain.Principal, id string, in agents.UpdateInput) (*domain.Agent, error)
	Delete(ctx context.Context, p domain.Principal, id string) error
	CurrentVersion(ctx context.Context, p domain.Principal, id string) (*domain.AgentVersion, error)
	Versions(ctx context.Context, p domain.Principal, id string, offset, limit int) ([]*domain.AgentVersion, bool, error)
	Catalog(ctx context.Context, p domain.Principal) (domain.Catalog, error)
}

// NewAgents is the handler of the agents endpoint group.
func NewAgents(svc AgentService, opts Options) *Group {
	g := newGroup(opts)
	h := &agentHandlers{svc: svc, g: g}
	g.handle(http.MethodPost, "/api/v1/agent/validate/", false, h.validate)
	g.handle(http.MethodGet, "/api/v1/agent/catalog/", false, h.catalog) // a literal: never agent "catalog"
	g.handle(http.MethodPost, "/api/v1/agent/", false, h.create)
	g.handle(http.MethodGet, "/api/v1/agent/", false, listPage(domain.ScopeAgentsRead, viewedList(func(r *http.Request, offset, limit int) ([]*domain.Agent, bool, error) {
		return svc.List(r.Context(), principal(r), offset, limit)
	}, viewAgent)))
	g.handle(http.MethodGet, "/api/v1/agent/{id}/", false, getByID(domain.ScopeAgentsRead, "id", viewed(svc.Get, viewAgent)))
	g.handle(http.MethodPatch, "/api/v1/agent/{id}/", false, h.patch)
	g.handle(http.MethodPut, "/api/v1/agent/{id}/", false, h.put)
	g.handle(http.MethodDelete, "/api/v1/agent/{id}/", false, deleteByID(domain.ScopeAgentsWrite, "id", svc.Delete))
	g.handle(http.MethodGet, "/api/v1/agent/{id}/versions/", false, listPage(domain.ScopeAgentsRead, viewedList(func(r *http.Request, offset, limit int) ([]*domain.AgentVersion, bool, error) {
		return svc.Versions(r.Context(), principal(r), r.PathValue("id"), offset, limit)
	}, viewAgentVersion)))
	g.handle(http.MethodGet, "/api/v1/agent/{id}/versions/current/", false, getByID(domain.ScopeAgentsRead, "id", viewed(svc.CurrentVersion, viewAgentVersion)))
	return g
}

type agentHandlers struct {
	svc AgentService
	g   *Group
}

func require(r *http.Request, scope string) error {
	if !principal(r).Can(scope) {
		return domain.ErrPermission
	}
	return nil
}

func (h *agentHandlers) validate(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeAgentsRead); err != nil {
		return err
	}
	body, err := decodeObject(w, r, h.g.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	// A body wrapped as {"system_config": {...}} (the create shape) is validated as its content;
	// beside it only the create body's flags may stand.
	cfg, prefix := body, ""
	var wrapErrs []domain.FieldError
	if sc, ok := body["system_config"].(map[string]any); ok {
		cfg, prefix = sc, "system_config"
		wrapErrs = unknownFields(body, agentBodyFields)
	}
	errs, err := h.svc.Validate(r.Context(), principal(r), domain.ConfigDocOf(cfg), prefix)
	if err != nil {
		return err
	}
	errs = append(wrapErrs, errs...)
	if len(errs) > 0 {
		writeJSON(w, http.StatusOK, validateJSON{Valid: false, Errors: fieldErrorViews(errs)})
		return nil
	}
	writeJSON(w, http.StatusOK, validateJSON{Valid: true, Message: "Configuration is valid"})
	return nil
}

// agentBodyFields are the fields of a create or update body.
var agentBodyFields = []string{"system_config", "is_public", "is_shared", "origin_url"}

// agentBody reads a create or update body: system_config (the zero document when it is left
// out) plus the top-level flags.
func (h *agentHandlers) agentBody(w http.ResponseWriter, r *http.Request, needConfig bool) (domain.ConfigDoc, agents.Flags, error) {
	var f agents.Flags
	body, text, err := readObject(w, r, h.g.opts.MaxBodyBytes)
	if err != nil {
		return domain.ConfigDoc{}, f, err
	}
	errs := unknownFields(body, agentBodyFields)
	cfg, present := body["system_config"]
	var m map[string]any
	switch {
	case cfg == nil && needConfig:
		errs = append(errs, domain.FieldError{Field: "system_config", Message: "is required"})
	case present && cfg == nil:
		// PATCH would otherwise read null as "no change" and answer 200 doing nothing.
		errs = append(errs, domain.FieldError{Field: "system_config", Message: "must be an object, not null (leave it out to change only the flags)"})
	case !present:
	default:
		var ok bool
		if m, ok = cfg.(map[string]any); !ok {
			errs = append(errs, domain.FieldError{Field: "system_config", Message: "must be an object, not " + domain.JSONType(cfg)})
		}
	}
	for name, dst := range map[string]**bool{"is_public": &f.IsPublic, "is_shared": &f.IsShared} {
		if v, ok := body[name]; ok && v != nil {
			b, ok := v.(bool)
			if !ok {
				errs = append(errs, domain.FieldError{Field: name, Message: "must be a boolean"})
				continue
			}
			*dst = &b
		}
	}
	if v, ok := body["origin_url"]; ok && v != nil {
		u, ok := v.(string)
		if !ok {
			errs = append(errs, domain.FieldError{Field: "origin_url", Message: "must be a string or null"})
		} else {
			f.OriginURL = &u
		}
	}
	if len(errs) > 0 {
		return domain.ConfigDoc{}, f, domain.Invalid(errs)
	}
	return domain.ConfigDocJSON(m, memberText(text, "system_config")), f, nil
}

// memberText is the JSON text of the member name of the object in text (the last one, as the
// decoder reads a key written twice), nil when there is none: the configuration as the client
// wrote it, for the order of its members.
func memberText(text []byte, name string) []byte {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(text, &members); err != nil {
		return nil
	}
	return members[name]
}

func (h *agentHandlers) create(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeAgentsWrite); err != nil {
		return err
	}
	cfg, f, err := h.agentBody(w, r, true)
	if err != nil {
		return err
	}
	a, err := h.svc.Create(r.Context(), principal(r), agents.CreateInput{Config: cfg, Flags: f})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, viewAgent(a))
	return nil
}

func (h *agentHandlers) update(w http.ResponseWriter, r *http.Request, merge bool) error {
	if err := require(r, domain.ScopeAgentsWrite); err != nil {
		return err
	}
	cfg, f, err := h.agentBody(w, r, !merge)
	if err != nil {
		return err
	}
	a, err := h.svc.Update(r.Context(), principal(r), r.PathValue("id"), agents.UpdateInput{Config: cfg, Merge: merge, Flags: f})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewAgent(a))
	return nil
}

func (h *agentHandlers) patch(w http.ResponseWriter, r *http.Request) error {
	return h.update(w, r, true)
}

func (h *agentHandlers) put(w http.ResponseWriter, r *http.Request) error {
	return h.update(w, r, false)
}
