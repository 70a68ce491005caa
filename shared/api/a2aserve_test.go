package api_test

import (
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/api/a2aserve"
)

// withA2A is g with the A2A routes the runtime function adds to it (run.Runtime); their tests
// run in package a2aserve, over the stack, with the A2A clients.
func withA2A(g *api.Group) *api.Group {
	a2aserve.Serve(g, nil, nil, nil)
	return g
}
