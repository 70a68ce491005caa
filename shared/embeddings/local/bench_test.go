package local_test

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/localembed"
)

// BenchmarkLocalEmbed embeds batches of 32 real passages as files hold them (line breaks,
// indentation: the Go specification and the Apache licence of shared/localembed's testdata)
// three ways: "model" is the model alone on the text as given (the provider before it
// normalised whitespace), "provider" is the provider (Readable, then the model), "readable" is
// the normalisation alone. cpu-ms/chunk is processor time, comparable on a busy machine.
//
//	go test ./shared/embeddings/local -run '^$' -bench LocalEmbed -benchtime 3x
func BenchmarkLocalEmbed(b *testing.B) {
	raw, err := os.ReadFile("../../localembed/testdata/spec-and-licence.json")
	if err != nil {
		b.Fatal(err)
	}
	var passages []string
	if err := json.Unmarshal(raw, &passages); err != nil {
		b.Fatal(err)
	}
	texts := passages[:min(32, len(passages))]
	ctx := context.Background()
	cache := modelCache(b)
	files, err := localembed.EnsureFiles(ctx, cache)
	if err != nil {
		b.Fatal(err)
	}
	m, err := localembed.Load(files)
	if err != nil {
		b.Fatal(err)
	}
	p, err := embeddings.New(embeddings.Options{Local: local.Loader(cache)})
	if err != nil {
		b.Fatal(err)
	}
	e, err := p.Embedder(ctx, domain.Embedding{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"model", func() error { _, err := m.Embed(ctx, texts); return err }},
		{"provider", func() error { _, err := e.Embed(ctx, texts); return err }},
		{"readable", func() error {
			for _, t := range texts {
				_ = local.Readable(t)
			}
			return nil
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cpuSeconds()
			for b.Loop() {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
			n := float64(b.N * len(texts))
			b.ReportMetric((cpuSeconds()-cpu0)*1e6/n, "cpu-µs/chunk")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/n, "µs/chunk")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
		})
	}
}

// cpuSeconds is the processor time this process has used (user and system).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
