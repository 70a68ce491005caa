package sessions

import (
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
)

type names []string

func (n names) Has(s string) bool {
	for _, x := range n {
		if x == s {
			return true
		}
	}
	return false
}
func (n names) Names() []string { return n }

func (n names) CheckSchema(map[string]any) error { return nil }

// TestExecuteParsesOnce: the typed configuration of a session is parsed once per process and
// shared by later executes of sessions with the same configuration (config_hash, which the
// service computed when it stored the session).
func TestExecuteParsesOnce(t *testing.T) {
	s := &Service{tools: names{"calculator"}}
	cfg := map[string]any{"name": "bot", "agent_type": "react_agent", "tools": []any{"calculator"}}
	sess := &domain.Session{ID: "s1", Config: cfg, ConfigHash: domain.ConfigHash(cfg)}
	g1, err := s.parsed(sess)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := s.parsed(sess)
	if err != nil {
		t.Fatal(err)
	}
	if g1 != g2 {
		t.Error("the second execute parsed the configuration again")
	}
	if g1.Nodes["bot"].Tools[0] != "calculator" {
		t.Errorf("parsed %+v", g1.Nodes["bot"])
	}

	other := map[string]any{"name": "other"}
	g3, err := s.parsed(&domain.Session{ID: "s2", Config: other, ConfigHash: domain.ConfigHash(other)})
	if err != nil {
		t.Fatal(err)
	}
	if g3 == g1 || g3.Name != "other" {
		t.Errorf("another configuration got %q's graph", g3.Name)
	}
}
