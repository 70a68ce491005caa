package main

import (
	"fmt"
	"net/http"

	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
)

// newRouter builds every HTTP function's handler once, from one app (one store and key cache),
// as separate Lambda functions would each build theirs, and routes by template.yaml.
func newRouter(tmpl *sam.Template, a *app.App) (http.Handler, error) {
	return sam.NewRouter(tmpl, func(dir, id string) (http.Handler, error) {
		h, err := a.Handler(dir)
		if err != nil {
			return nil, fmt.Errorf("template.yaml function %s (functions/%s): %w", id, dir, err)
		}
		return h, nil
	})
}
