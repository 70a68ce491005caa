// Package openaiserve serves a company's agents through the OpenAI API, so that the clients teams
// already have (the OpenAI SDKs, Open WebUI, LibreChat …) run them unchanged: under
// /api/v1/openai/v1/ it answers chat/completions and responses (streaming and not) with the agent
// named by model, and models lists the agents (docs/openai-api.md). It is a package of its own so
// that only the runtime group links it.
package openaiserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

// Prefix is where the API is served: an OpenAI client's base_url is <host>/api/v1/openai/v1.
const Prefix = "/api/v1/openai/v1"

// MaxModels bounds the agents one models list shows.
const MaxModels = 1000

// Agents finds a caller's agents; agents.Service is the implementation.
type Agents interface {
	List(ctx context.Context, p domain.Principal, offset, limit int) ([]*domain.Agent, bool, error)
	GetByKey(ctx context.Context, p domain.Principal, agentKey string) (*domain.Agent, error)
}

// Runs opens sessions on stored agents and runs them; sessions.Service is the implementation.
type Runs interface {
	// OnAgentFor opens the session serving the request's end user (its user; nil none).
	OnAgentFor(ctx context.Context, p domain.Principal, a *domain.Agent, userID *string) (*domain.Session, error)
	Execute(ctx context.Context, p domain.Principal, sessionID string, req sessions.ExecuteRequest, obs sessions.Observer) (*sessions.Result, error)
}

// Serve adds the OpenAI API to g: POST chat/completions and responses run the agent whose
// agent_key is the request's model, GET models lists the company's agents. Callers authenticate
// with an API key as the bearer (as OpenAI SDKs send theirs) or as x-api-key; every failure is
// answered in OpenAI's error shape.
func Serve(g *api.Group, agents Agents, runs Runs) {
	h := &server{g: g, agents: agents, runs: runs}
	g.HandleAuthenticatedAs(http.MethodPost, Prefix+"/chat/completions", h.chat, h.fail)
	g.HandleAuthenticatedAs(http.MethodPost, Prefix+"/responses", h.responses, h.fail)
	g.HandleAuthenticatedAs(http.MethodGet, Prefix+"/models", h.models, h.fail)
}

type server struct {
	g      *api.Group
	agents Agents
	runs   Runs
}

// errorJSON is OpenAI's error object.
type errorJSON struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// errUnknownModel marks a model that names no agent of the caller's company.
var errUnknownModel = errors.New("unknown model")

// errorOf is err as OpenAI's error object: the API's error type and words, the request field it
// is about, and OpenAI's code where one applies (invalid_api_key, model_not_found,
// rate_limit_exceeded).
func (h *server) errorOf(r *http.Request, err error) (int, errorJSON) {
	typ, msg := h.g.ErrorOf(r, err)
	kind := domain.KindOf(err)
	e := errorJSON{Message: msg, Type: typ}
	str := func(s string) *string { return &s }
	var de *domain.Error
	switch {
	case errors.Is(err, errUnknownModel):
		e.Param, e.Code = str("model"), str("model_not_found")
	case kind == domain.KindUnauthenticated:
		e.Code = str("invalid_api_key")
	case kind == domain.KindRateLimited:
		e.Code = str("rate_limit_exceeded")
	case errors.As(err, &de) && len(de.Fields) > 0:
		e.Param = str(de.Fields[0].Field)
	}
	return kind.Status(), e
}

// fail answers err in OpenAI's error shape with the status of its kind.
func (h *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, e := h.errorOf(r, err)
	switch domain.KindOf(err) {
	case domain.KindOverloaded:
		w.Header().Set("Retry-After", "1")
	case domain.KindConflict:
		w.Header().Set("Retry-After", strconv.Itoa(api.ConflictRetryAfter))
	}
	writeJSON(w, status, map[string]errorJSON{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // a client gone away is not ours to report
}

// decode reads the body into v as every route reads one (JSON or YAML, an object, bounded as an
// execute's body is).
func (h *server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	b, err := api.ReadObject(w, r, h.g.MaxExecuteBody())
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return domain.Invalid([]domain.FieldError{{Field: typeErr.Field, Message: "must be of type " + jsonType(typeErr.Type.Kind().String())}})
		}
		return domain.Invalid([]domain.FieldError{{Field: "", Message: "The request body does not have the request's shape"}})
	}
	return nil
}

func jsonType(kind string) string {
	switch kind {
	case "slice":
		return "array"
	case "map", "struct":
		return "object"
	case "bool":
		return "boolean"
	case "int", "int64", "float64":
		return "number"
	}
	return kind
}

// agent is the caller's company's agent whose key model is; any other (unknown, unreadable, or
// another company's public one) is an unknown model.
func (h *server) agent(ctx context.Context, p domain.Principal, model string) (*domain.Agent, error) {
	if model == "" {
		return nil, domain.Invalid([]domain.FieldError{{Field: "model", Message: "is required: the agent_key of one of your agents (GET " + Prefix + "/models lists them)"}})
	}
	a, err := h.agents.GetByKey(ctx, p, model)
	if err == nil && a.Company != p.Company {
		err = domain.ErrNotFound
	}
	if domain.KindOf(err) == domain.KindNotFound {
		return nil, &domain.Error{Kind: domain.KindNotFound, Err: errUnknownModel,
			Message: fmt.Sprintf("The model %q does not exist or you do not have access to it: a model is the agent_key of one of your company's agents", domain.Clip(model, 64))}
	}
	return a, err
}

// modelJSON is one entry of the models list.
type modelJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// models lists the agents of the caller's company as OpenAI models, their agent_key as the id.
func (h *server) models(w http.ResponseWriter, r *http.Request) error {
	p := api.Principal(r)
	if !p.Can(domain.ScopeAgentsRead) {
		return domain.ErrPermission
	}
	data := []modelJSON{}
	for offset := 0; offset < MaxModels; {
		page, more, err := h.agents.List(r.Context(), p, offset, min(200, MaxModels-offset))
		if err != nil {
			return err
		}
		for _, a := range page {
			if a.Company == p.Company {
				data = append(data, modelJSON{ID: a.AgentKey, Object: "model", Created: a.CreatedAt.Unix(), OwnedBy: a.Company})
			}
		}
		offset += len(page)
		if !more || len(page) == 0 {
			break
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
	return nil
}
