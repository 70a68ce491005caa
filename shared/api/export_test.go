package api

import "github.com/agentorch/agentorch/shared/domain"

// The views of the domain types, for the external tests that build response bodies as the
// handlers encode them (openapicheck_cases_test.go).

func AgentJSON(a *domain.Agent) any { return viewAgent(a) }

func AgentVersionJSON(v *domain.AgentVersion) any { return viewAgentVersion(v) }

func KeyJSON(k *domain.APIKey) any { return viewKey(k, "") }
