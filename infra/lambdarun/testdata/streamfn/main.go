// Command streamfn is a bootstrap for lambdarun's streaming test: behind a streaming function URL
// it writes a first event, then waits until GATE_URL answers (the test answers once it has read
// that event), then writes the last one. Were the response not streamed, it would never end.
package main

import (
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/agentorch/agentorch/shared/platform"
)

func main() {
	platform.StartHTTPStream(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "event: first\ndata: {}\n\n")
		if res, err := http.Get(os.Getenv("GATE_URL")); err == nil {
			res.Body.Close()
		}
		_, _ = io.WriteString(w, "event: last\ndata: {\"path\":\""+r.URL.Path+"\"}\n\n")
	}), slog.New(slog.NewJSONHandler(os.Stderr, nil)))
}
