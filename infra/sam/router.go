package sam

import "net/http"

// Router sends each request to the handler of the function API Gateway would invoke for it, by
// the routes the template declares (Match: literal routes before path variables before {proxy+}
// before $default; a trailing slash ignored). The dev server and the tests route with it, so
// neither can route what the deployed API would not.
type Router struct {
	tmpl     *Template
	handlers map[string]http.Handler // by function logical id
}

// NewRouter routes to handlers by function logical id; handler returns the handler of a
// function behind the HTTP API (its directory under functions/ and its logical id are given).
func NewRouter(t *Template, handler func(dir, logicalID string) (http.Handler, error)) (*Router, error) {
	rt := &Router{tmpl: t, handlers: map[string]http.Handler{}}
	for _, fn := range t.Functions() {
		if len(fn.Routes)+len(fn.Fallbacks) == 0 {
			continue // not behind the HTTP API (a queue consumer, say)
		}
		h, err := handler(fn.Dir, fn.LogicalID)
		if err != nil {
			return nil, err
		}
		rt.handlers[fn.LogicalID] = h
	}
	return rt, nil
}

func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
