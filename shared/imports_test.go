// Package shared holds only this test: the rule of the house that imports point inward.
package shared

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/agentorch/agentorch/"

// layer says what each package under shared/ is. A new package must be added here, so that its
// place in the layering is a decision, not an accident.
var layer = map[string]string{
	"domain": "domain",
	// Leaf libraries of pure logic: they know the domain's types at most.
	"backoff": "lib", "chunk": "lib", "extract": "lib", "filelock": "lib", "localembed": "lib", "npmpack": "lib", "glove": "lib",
	"netguard": "lib", "netguard/netguardtest": "lib", "seal": "lib", "pricing": "lib", "awserr": "lib",
	// Features: the use cases. They define the interfaces the adapters implement.
	"agents": "feature", "auth": "feature", "sessions": "feature", "engine": "feature",
	"tools": "feature", "images": "feature", "knowledge": "feature", "library": "feature",
	"mcpservers": "feature", "audit": "feature", "audit/audittest": "feature", "webhooks": "feature",
	"usage": "feature", "usage/usagetest": "feature", "memory": "feature",
	// Each feature's one fake of its store port, and the StoreSuite that holds it and the DynamoDB
	// adapter to the port's contract.
	"agents/agentstest": "feature", "auth/authtest": "feature", "knowledge/knowledgetest": "feature",
	"library/librarytest": "feature", "mcpservers/mcpserverstest": "feature", "sessions/sessionstest": "feature",
	"webhooks/webhookstest": "feature", "memory/memorytest": "feature",
	// Adapters: outside services (and the offline model), behind the features' interfaces.
	"dynamo": "adapter", "s3": "adapter", "sqs": "adapter", "bedrock": "adapter", "openai": "adapter",
	"localmodel": "adapter", "vectors": "adapter", "platform": "adapter", "embeddings": "adapter",
	"embeddings/local": "adapter", "mcp": "adapter", "rerank": "adapter",
	// The OTLP exporter (an outside collector) and the test-only receiver that holds it.
	"telemetry": "adapter", "telemetry/telemetrytest": "adapter",
	// The HTTP layer and the composition root.
	"api": "api", "api/a2aserve": "api", "api/mcpserve": "api", "api/openaiserve": "api", "app": "app", "app/core": "app", "app/kb": "app", "app/run": "app", "app/secrets": "app", "app/tooling": "app",
	"app/meta": "app", "app/servers": "app", "app/hooks": "app", "app/mem": "app", "app/llm": "app",
}

// may lists the layers each layer may depend on (transitively).
var may = map[string][]string{
	"domain":  {},
	"lib":     {"domain", "lib"},
	"feature": {"domain", "lib", "feature"},
	"adapter": {"domain", "lib", "adapter"},
	"api":     {"domain", "lib", "feature", "api"},                   // the MCP surface (its own package, so that only runtime links the SDK) builds on api
	"app":     {"domain", "lib", "feature", "adapter", "api", "app"}, // the composition root's parts build on its core
}

// TestImportsPointInward fails when a feature depends on an adapter, an adapter on a feature or
// the HTTP layer, or domain on anything of ours (through `go list -deps`, so indirect paths
// count too).
func TestImportsPointInward(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"shared/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := sharedName(fields[0])
		if !ok || pkg == "" {
			continue // this test's own package
		}
		seen++
		l, ok := layer[pkg]
		if !ok {
			t.Errorf("shared/%s is in no layer: add it to the table in this test", pkg)
			continue
		}
		for _, dep := range fields[1:] {
			d, ok := sharedName(dep)
			if !ok {
				if strings.HasPrefix(dep, module) && !(dep == module+"studio" && l == "app") {
					// The studio's embedded build (standard library only) is served by app's meta.
					t.Errorf("shared/%s depends on %s, outside shared/", pkg, strings.TrimPrefix(dep, module))
				}
				continue
			}
			dl, known := layer[d]
			if known && !slices.Contains(may[l], dl) {
				t.Errorf("shared/%s (%s) depends on shared/%s (%s): a %s may depend on %v only", pkg, l, d, dl, l, may[l])
			}
		}
	}
	if seen < 15 {
		t.Fatalf("go list found %d packages under shared/; the test reads nothing", seen)
	}
}

// sharedName returns the package's directory under shared/ ("" for shared itself).
func sharedName(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, module+"shared")
	if !ok {
		return "", false
	}
	return strings.TrimPrefix(rest, "/"), true
}
