package core

import (
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/usage"
)

// AuthUsage builds the auth function's group: tokens and API keys (Auth), the usage report,
// which reads only the store's counters, and the company's limits.
func AuthUsage(a *App) (*api.Group, error) {
	g, err := Auth(a)
	if err != nil {
		return nil, err
	}
	return g.ServeUsage(usage.New(a.Store)).ServeLimits(a.Auth), nil
}
