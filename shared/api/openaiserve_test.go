package api_test

import (
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/api/openaiserve"
)

// withOpenAI is g with the OpenAI API the runtime function adds to it (run.Runtime); its tests
// are in package openaiserve.
func withOpenAI(g *api.Group) *api.Group {
	openaiserve.Serve(g, nil, nil)
	return g
}
