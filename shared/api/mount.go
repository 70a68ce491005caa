package api

import "net/http"

// Mount serves h, without authentication and outside the error envelope, for GET (and HEAD) of
// prefix and every path below it: static files beside a group's routes (the studio beside
// meta's). Mounted paths are not API routes: Routes does not list them, and other methods get
// the group's 405 in the envelope.
func (g *Group) Mount(prefix string, h http.Handler) {
	prefix = trimSlash(prefix)
	g.mux.Handle("GET "+prefix, h)
	g.mux.Handle("GET "+prefix+"/{path...}", h)
}
