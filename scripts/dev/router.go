package main

import (
	"fmt"
	"net/http"

	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
)

// router sends each request to the function API Gateway would invoke for it, by the routes
// template.yaml declares (sam.Template.Match: literal routes before path variables before
// {proxy+} before $default; a trailing slash ignored), so the dev server cannot route what the
// deployed API would not.
type router struct {
	tmpl     *sam.Template
	handlers map[string]http.Handler // by function logical id
}

// newRouter builds every function's handler once, from one app (one store and key cache), as
// separate Lambda functions would each build theirs.
func newRouter(tmpl *sam.Template, a *app.App) (*router, error) {
	rt := &router{tmpl: tmpl, handlers: map[string]http.Handler{}}
	for _, fn := range tmpl.Functions() {
		if len(fn.Routes)+len(fn.Fallbacks) == 0 {
			continue // not behind the HTTP API (a queue consumer, say)
		}
		h, err := a.Handler(fn.Dir)
		if err != nil {
			return nil, fmt.Errorf("template.yaml function %s (functions/%s): %w", fn.LogicalID, fn.Dir, err)
		}
		rt.handlers[fn.LogicalID] = h
	}
	return rt, nil
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, _, ok := rt.tmpl.Match(r.Method, r.URL.Path)
	if !ok {
		// What an HTTP API answers when no route, not even $default, matches.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"Not Found"}` + "\n"))
		return
	}
	rt.handlers[id].ServeHTTP(w, r)
}
