package sessions

import (
	"sync"

	"github.com/agentorch/agentorch/shared/domain"
)

// maxCachedConfigs bounds the parsed configurations a process keeps (a few KB each).
const maxCachedConfigs = 1024

// configCache keeps parsed configurations by config_hash, so that an execute parses and
// validates its session's stored configuration at most once per process: the configuration was
// validated when the session was created, and the same map always parses to the same result
// (the tool catalog does not change while a process runs). A parsed configuration is never
// modified after parsing, so executes share it.
type configCache struct {
	mu sync.Mutex
	m  map[string]*domain.AgentConfig
}

func (c *configCache) get(hash string) (*domain.AgentConfig, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.m[hash]
	return g, ok
}

func (c *configCache) put(hash string, g *domain.AgentConfig) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedConfigs {
		c.m = make(map[string]*domain.AgentConfig) // simple and bounded: start over when full
	}
	c.m[hash] = g
}

// parsed returns the typed configuration of a session.
func (s *Service) parsed(sess *domain.Session) (*domain.AgentConfig, error) {
	key := sess.ConfigHash
	if key != "" {
		if g, ok := s.configs.get(key); ok {
			return g, nil
		}
	}
	g, errs := domain.ParseConfig(sess.Config, s.tools, "")
	if len(errs) > 0 {
		return nil, domain.Invalid(errs)
	}
	if key != "" && key == domain.ConfigHash(sess.Config) {
		s.configs.put(key, g)
	}
	return g, nil
}
