package opensearchlocal

import "net/http/httptest"

// Cleaner is the part of testing.TB Serve needs, so that the stand-in does not link testing.
type Cleaner interface {
	Helper()
	Cleanup(func())
}

// Serve serves a new stand-in over HTTP on a free local port until t ends, and returns its URL:
// the tests' way to a stand-in of their own.
func Serve(t Cleaner, opts Options) string {
	t.Helper()
	srv := New(opts)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return ts.URL
}
