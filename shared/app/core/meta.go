package core

import (
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/app/meta"
)

// Meta builds the meta group on the application, for the dev server and the tests: the group
// the meta function's main serves through meta.Handler without an App (its routes are public and
// read nothing stored).
func Meta(a *App) (*api.Group, error) { return meta.Group(a.Config, a.Log), nil }
