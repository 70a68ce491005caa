package api

import (
	"encoding/json"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// agentJSON is an agent as the API shows it.
type agentJSON struct {
	ID            string         `json:"id"`
	AgentKey      string         `json:"agent_key"`
	Name          string         `json:"name"`
	Architecture  string         `json:"architecture"`
	EntryPoint    string         `json:"entry_point"`
	IsPublic      bool           `json:"is_public"`
	IsShared      bool           `json:"is_shared"`
	OriginURL     *string        `json:"origin_url"`
	Owner         string         `json:"owner"`
	Company       string         `json:"company"`
	SystemConfig  map[string]any `json:"system_config"`
	VersionNumber string         `json:"version_number"`
	ConfigHash    string         `json:"config_hash"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
}

func viewAgent(a *domain.Agent) agentJSON {
	return agentJSON{ID: a.ID, AgentKey: a.AgentKey, Name: a.Name, Architecture: a.Architecture, EntryPoint: a.EntryPoint,
		IsPublic: a.IsPublic, IsShared: a.IsShared, OriginURL: a.OriginURL, Owner: a.Owner, Company: a.Company,
		SystemConfig: a.SystemConfig, VersionNumber: a.VersionNumber, ConfigHash: a.ConfigHash, CreatedAt: a.CreatedAt,
		UpdatedAt: a.UpdatedAt}
}

// agentVersionJSON is an agent version as the API shows it.
type agentVersionJSON struct {
	ID            string          `json:"id"`
	AgentID       string          `json:"agent"`
	VersionNumber string          `json:"version_number"`
	SystemConfig  json.RawMessage `json:"system_config"` // the members in the order the client wrote them
	Metadata      map[string]any  `json:"metadata"`
}

func viewAgentVersion(v *domain.AgentVersion) agentVersionJSON {
	cfg := v.SystemConfigJSON
	if cfg == nil {
		cfg, _ = domain.ConfigDocOf(v.SystemConfig).OrderedJSON() // a map decoded from JSON always encodes
	}
	return agentVersionJSON{ID: v.ID, AgentID: v.AgentID, VersionNumber: v.VersionNumber, SystemConfig: cfg, Metadata: v.Metadata}
}

// validateJSON is the validate endpoint's verdict: valid with a message, or not with the
// errors (the members in the order encoding/json wrote them when it was a map).
type validateJSON struct {
	Errors  []fieldErrorJSON `json:"errors,omitempty"`
	Message string           `json:"message,omitempty"`
	Valid   bool             `json:"valid"`
}
