package api

import (
	"net/http"

	"github.com/agentorch/agentorch/shared/domain"
)

// catalogJSON is GET /api/v1/agent/catalog/: what this deployment offers configurations.
type catalogJSON struct {
	Providers  []providerJSON `json:"providers"`
	Tools      []toolSpecJSON `json:"tools"`
	Parameters []paramJSON    `json:"parameters"`
}

// providerJSON is a model provider of the catalog.
type providerJSON struct {
	Name         string   `json:"name"`
	Default      bool     `json:"default"`
	DefaultModel *string  `json:"default_model"` // null: the provider takes no model (local)
	Models       []string `json:"models"`
}

// toolSpecJSON is a built-in tool of the catalog, as the model is shown it.
type toolSpecJSON struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

// paramJSON is a number of llm_config with its limits.
type paramJSON struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"` // number or integer
	Minimum float64  `json:"minimum"`
	Maximum float64  `json:"maximum"`
	Default *float64 `json:"default"`
}

func viewCatalog(c domain.Catalog) catalogJSON {
	out := catalogJSON{Providers: []providerJSON{}, Tools: []toolSpecJSON{}, Parameters: []paramJSON{}}
	for _, p := range c.Providers {
		v := providerJSON{Name: p.Name, Default: p.Default, Models: append([]string{}, p.Models...)}
		if p.DefaultModel != "" {
			v.DefaultModel = &p.DefaultModel
		}
		out.Providers = append(out.Providers, v)
	}
	for _, t := range c.Tools {
		out.Tools = append(out.Tools, toolSpecJSON{Name: t.Name, Description: t.Description, InputSchema: t.Schema})
	}
	for _, p := range c.Params {
		typ := "number"
		if p.Integer {
			typ = "integer"
		}
		out.Parameters = append(out.Parameters, paramJSON{Name: p.Name, Type: typ, Minimum: p.Min, Maximum: p.Max, Default: p.Default})
	}
	return out
}

// catalog answers GET /api/v1/agent/catalog/ (scope agents:read).
func (h *agentHandlers) catalog(w http.ResponseWriter, r *http.Request) error {
	if err := require(r, domain.ScopeAgentsRead); err != nil {
		return err
	}
	c, err := h.svc.Catalog(r.Context(), principal(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewCatalog(c))
	return nil
}
