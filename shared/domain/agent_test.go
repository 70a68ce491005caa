package domain

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAgentKeyBase(t *testing.T) {
	tests := map[string]string{
		"Customer Support Bot": "customer-support-bot",
		"  --Hello__World!! ":  "hello-world",
		"Ünïcode only ✓":       "unicode-only",
		"Ünïcödé Bot":          "unicode-bot",
		"Straße Æsir Øl Łódź":  "strasse-aesir-ol-lodz",
		"ＦＵＬＬ ｗｉｄｔｈ ﬁle²":      "full-width-file2",
		"Помощник Ёж":          "pomoshchnik-ezh",
		"Άλφα":                 "alfa",
		"助手":                   "agent",
		"\u200b\u200d":         "agent",
		"":                     "agent",
		"!!!":                  "agent",
		"a very long name that goes on and on and on past the limit of keys": "a-very-long-name-that-goes-on-and-on-and-on-past",
	}
	for in, want := range tests {
		if got := AgentKeyBase(in); got != want {
			t.Errorf("AgentKeyBase(%q) = %q, want %q", in, got, want)
		}
	}
	if got := AgentKeyCandidate("bot", 3); got != "bot-3" {
		t.Errorf("candidate 3 = %q", got)
	}
}

func TestNextVersion(t *testing.T) {
	base := map[string]any{"name": "a", "agent_type": "llm_agent", "tools": []any{"x"}}
	tests := []struct {
		name string
		next map[string]any
		want string
	}{
		{"prompt change is a patch", MergePatch(base, map[string]any{"system_prompt": "hi"}), "1.2.4"},
		{"tools change is minor", MergePatch(base, map[string]any{"tools": []any{"x", "y"}}), "1.3.0"},
		{"type change is major", MergePatch(base, map[string]any{"agent_type": "react_agent"}), "2.0.0"},
	}
	for _, tt := range tests {
		if got := NextVersion("1.2.3", base, tt.next); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestConfigHash(t *testing.T) {
	a := map[string]any{"name": "a", "llm_config": map[string]any{"model": "m", "temperature": 0.1}}
	b := map[string]any{"llm_config": map[string]any{"temperature": 0.1, "model": "m"}, "name": "a"}
	if ConfigHash(a) != ConfigHash(b) {
		t.Error("hash depends on key order")
	}
	c := MergePatch(a, map[string]any{"system_prompt": "x"})
	if ConfigHash(a) == ConfigHash(c) {
		t.Error("hash did not change with the configuration")
	}
	if len(ConfigHash(a)) != 16 {
		t.Errorf("hash %q is not 16 hex digits", ConfigHash(a))
	}
}

func TestMergePatchAndEffective(t *testing.T) {
	dst := map[string]any{"name": "a", "llm_config": map[string]any{"model": "m", "temperature": 0.1}, "tools": []any{"x"}}
	got := MergePatch(dst, map[string]any{"llm_config": map[string]any{"temperature": nil, "max_tokens": 5}, "tools": nil})
	want := map[string]any{"name": "a", "llm_config": map[string]any{"model": "m", "max_tokens": 5}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merge (-want +got):\n%s", diff)
	}
	if _, ok := dst["tools"]; !ok {
		t.Error("merge changed its input")
	}
	eff := Effective(map[string]any{"name": "a"})
	if eff["agent_type"] != AgentTypeLLM {
		t.Errorf("agent_type default = %v", eff["agent_type"])
	}
	if mt, _ := Number(eff["llm_config"].(map[string]any)["max_tokens"]); mt != DefaultMaxTokens {
		t.Errorf("max_tokens default = %v", mt)
	}
}
