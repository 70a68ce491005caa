package mem_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/kb"
	"github.com/agentorch/agentorch/shared/app/mem"
	"github.com/agentorch/agentorch/shared/platform"
)

func newApp(t *testing.T, edit func(*platform.Config)) *core.App {
	t.Helper()
	cfg, err := platform.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	edit(&cfg)
	return core.NewWithAWS(aws.Config{Region: "us-east-1"}, cfg, slog.New(slog.DiscardHandler))
}

// TestUnbuildableService: embedders the deployment cannot offer are an error from Service, the
// same every time, never a service left to fail later; nothing touches the network.
func TestUnbuildableService(t *testing.T) {
	a := newApp(t, func(c *platform.Config) { c.EmbeddingProvider = "no-such-provider" })
	s1, err1 := mem.Service(a)
	s2, err2 := mem.Service(a)
	if err1 == nil || s1 != nil || s2 != nil || !errors.Is(err2, err1) {
		t.Fatalf("Service() = %v, %v then %v, %v; want nil and one error", s1, err1, s2, err2)
	}
	if !strings.Contains(err1.Error(), "no-such-provider") {
		t.Errorf("error %q does not name the provider", err1)
	}
}

// TestSharedWithKnowledge: memory and the knowledge feature use one vector index and one set of
// embedders (one local model loaded in a process that serves both).
func TestSharedWithKnowledge(t *testing.T) {
	a := newApp(t, func(*platform.Config) {})
	i1, err1 := kb.Index(a)
	i2, err2 := kb.Index(a)
	e1, err3 := kb.Embedders(a)
	e2, err4 := kb.Embedders(a)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		t.Fatal(err)
	}
	if i1 != i2 || e1 != e2 {
		t.Errorf("Index %p then %p, Embedders %p then %p: want one of each", i1, i2, e1, e2)
	}
}
