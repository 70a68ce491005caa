package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Agent types the service runs.
const (
	AgentTypeLLM   = "llm_agent"
	AgentTypeReact = "react_agent"
)

// VectorEngine is the one knowledge-base engine the service offers.
const VectorEngine = "opensearch"

// DefaultMaxTokens is filled into llm_config.max_tokens when the client leaves it out.
const DefaultMaxTokens = 4096

// Agent is an agent with its current configuration. It has no wire form of its own: dynamo
// stores an agentRecord and the API shows an agentJSON.
type Agent struct {
	ID            string
	AgentKey      string
	Name          string
	Architecture  string
	EntryPoint    string
	IsPublic      bool
	IsShared      bool
	OriginURL     *string
	Owner         string
	Company       string
	SystemConfig  map[string]any
	VersionNumber string
	ConfigHash    string
	CreatedAt     time.Time
	UpdatedAt     time.Time

	// VersionID is the id of the current AgentVersion; Explicit is the configuration exactly as
	// the client set it (SystemConfig adds the service's defaults).
	VersionID string
	Explicit  map[string]any
	// Seq counts versions (1 for the first); stores use it for optimistic concurrency.
	Seq int
}

// AgentVersion is one immutable configuration of an agent.
type AgentVersion struct {
	ID            string
	AgentID       string
	VersionNumber string
	Seq           int
	SystemConfig  map[string]any
	Metadata      map[string]any
	CreatedAt     time.Time

	// SystemConfigJSON is SystemConfig in JSON with its members in the order the client wrote
	// them (ConfigDoc.OrderedJSON), which JSON gives no meaning but a reader of the configuration
	// does; nil when unknown, and SystemConfig is then shown with its keys sorted.
	SystemConfigJSON json.RawMessage
}

// CanRead reports whether p may read a: its own company's agents when owned or shared, and public
// agents of any company.
func (a *Agent) CanRead(p Principal) bool {
	if a.IsPublic {
		return true
	}
	return a.Company == p.Company && (a.Owner == p.Owner || a.IsShared)
}

// CanWrite reports whether p may change or delete a: only its owner.
func (a *Agent) CanWrite(p Principal) bool {
	return a.Company == p.Company && a.Owner == p.Owner
}

// ConfigHash is a short, stable fingerprint of a configuration: the first 16 hex digits of the
// SHA-256 of its canonical JSON (object keys sorted).
func ConfigHash(cfg map[string]any) string {
	b, _ := json.Marshal(cfg) // maps of JSON values always marshal
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// AgentKeyBase derives the readable part of an agent_key from a name: transliterated to ASCII
// where possible ("Ünïcödé" → "unicode", "Straße" → "strasse"), lower case, runs of other
// characters become one hyphen, at most 48 characters.
func AgentKeyBase(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(Transliterate(name)) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 48 {
		s = strings.TrimRight(s[:48], "-")
	}
	if s == "" {
		s = "agent"
	}
	return s
}

// AgentKeyCandidate is the n-th key tried for a base: the base itself, then base-2, base-3 …
func AgentKeyCandidate(base string, n int) string {
	if n <= 1 {
		return base
	}
	return fmt.Sprintf("%s-%d", base, n)
}

// NextVersion applies the version_number rule to a configuration change: a changed agent_type
// bumps the major part; changed capabilities (tools, knowledge_bases, agents, edges, entry_point)
// the minor; any other change the patch.
func NextVersion(current string, old, next map[string]any) string {
	major, minor, patch := parseVersion(current)
	switch {
	case !jsonEqual(old["agent_type"], next["agent_type"]):
		return fmt.Sprintf("%d.0.0", major+1)
	case changedAny(old, next, "tools", "knowledge_bases", "agents", "edges", "entry_point"):
		return fmt.Sprintf("%d.%d.0", major, minor+1)
	default:
		return fmt.Sprintf("%d.%d.%d", major, minor, patch+1)
	}
}

// FirstVersion is the version_number of a new agent.
const FirstVersion = "1.0.0"

func parseVersion(v string) (major, minor, patch int) {
	parts := strings.SplitN(v, ".", 3)
	nums := []*int{&major, &minor, &patch}
	for i, p := range parts {
		n, _ := strconv.Atoi(p)
		*nums[i] = n
	}
	if major == 0 && minor == 0 && patch == 0 {
		major = 1
	}
	return major, minor, patch
}

func changedAny(a, b map[string]any, keys ...string) bool {
	for _, k := range keys {
		if !jsonEqual(a[k], b[k]) {
			return true
		}
	}
	return false
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Effective returns the configuration the service runs: a deep copy of the explicit one with
// defaults filled in (agent_type llm_agent, llm_config.max_tokens, also inside graph nodes).
func Effective(explicit map[string]any) map[string]any {
	cfg := DeepCopy(explicit)
	fillNodeDefaults(cfg)
	if nodes, ok := cfg["agents"].([]any); ok {
		for _, n := range nodes {
			if m, ok := n.(map[string]any); ok {
				fillNodeDefaults(m)
			}
		}
	}
	return cfg
}

func fillNodeDefaults(cfg map[string]any) {
	if _, ok := cfg["agent_type"]; !ok {
		cfg["agent_type"] = AgentTypeLLM
	}
	llm, ok := cfg["llm_config"].(map[string]any)
	if !ok {
		llm = map[string]any{}
		cfg["llm_config"] = llm
	}
	if _, ok := llm["max_tokens"]; !ok {
		llm["max_tokens"] = json.Number(strconv.Itoa(DefaultMaxTokens))
	}
}

// DeepCopy copies a JSON-shaped map so that changes to the copy leave the original alone.
func DeepCopy(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return DeepCopy(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopyValue(e)
		}
		return out
	default:
		return v
	}
}

// MergePatch applies an RFC 7386 JSON merge patch to a copy of dst: objects merge recursively and
// a null value removes the key.
func MergePatch(dst, patch map[string]any) map[string]any {
	out := DeepCopy(dst)
	for k, v := range patch {
		if v == nil {
			delete(out, k)
			continue
		}
		if pm, ok := v.(map[string]any); ok {
			if dm, ok := out[k].(map[string]any); ok {
				out[k] = MergePatch(dm, pm)
				continue
			}
			out[k] = MergePatch(map[string]any{}, pm)
			continue
		}
		out[k] = deepCopyValue(v)
	}
	return out
}

// ErrAgentKeyTaken is what an agent store reports (wrapped) when agent_key is already used.
var ErrAgentKeyTaken = errors.New("agent key taken")
