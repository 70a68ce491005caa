// Package spectest holds the official OpenSearch API specification for tests: it loads it from
// the module cache, finds the operation of a request, and checks requests and responses against
// the operation's schemas (Spec.ValidateRequest, Spec.ValidateResponse), alone or in an
// http.Handler in front of a server (Checker). opensearchlocal's tests check the stand-in's
// answers with it; shared/vectors' tests check what the product sends.
package spectest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// The OpenSearch API specification (github.com/opensearch-project/opensearch-api-specification)
// is not published to a package registry on its own, but its built, merged form
// (opensearch-openapi.yaml) ships inside the official Go client's module, which the product
// requires (shared/vectors): it is read from the module cache (go build and go mod download put
// it there), so it always matches the client version in go.mod. The spec's test stories are not
// in that module; the ones opensearchlocal replays are vendored under its testdata/spec.

// Module is the Go module whose directory holds opensearch-openapi.yaml.
const Module = "github.com/opensearch-project/opensearch-go/v4"

// Version is the OpenSearch version requests are checked for: the template's domain
// (EngineVersion OpenSearch_2.19). What the spec marks as added later (x-version-added) or
// removed by then (x-version-removed) is refused: operations, parameters, fields, alternatives.
const Version = "2.19"

// The spec is added to the schema compiler twice: as published, for responses, and closed
// (strictDoc) for requests.
const (
	specURL   = "https://opensearch.local/opensearch-openapi.json"
	strictURL = "https://opensearch.local/opensearch-openapi.strict.json"
)

// Spec is the loaded specification with its compiled schemas. It is safe for concurrent use.
type Spec struct {
	doc      map[string]any
	strict   map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
	paths    []specPath
}

type specPath struct {
	template string
	segs     []string
}

var (
	once    sync.Once
	loaded  *Spec
	loadErr error
)

// Load returns the specification, read once per process.
func Load() (*Spec, error) {
	once.Do(func() { loaded, loadErr = read() })
	return loaded, loadErr
}

// Must is Load for tests: a spec that cannot be read fails t.
func Must(t testing.TB) *Spec {
	t.Helper()
	s, err := Load()
	if err != nil {
		t.Fatalf("load the OpenSearch API specification: %v", err)
	}
	return s
}

func read() (*Spec, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(goBin, "list", "-m", "-f", "{{.Dir}}", Module).Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m %s: %w", Module, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return nil, fmt.Errorf("module %s is not in the module cache (go mod download)", Module)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "opensearch-openapi.yaml"))
	if err != nil {
		return nil, err
	}
	var y any
	if err := yaml.Unmarshal(raw, &y); err != nil {
		return nil, fmt.Errorf("parse opensearch-openapi.yaml: %w", err)
	}
	js, err := json.Marshal(JSONCompatible(y))
	if err != nil {
		return nil, err
	}
	doc, err := unmarshal(js)
	if err != nil {
		return nil, err
	}
	if err := patch(doc, responsePatches); err != nil {
		return nil, err
	}
	strict, err := unmarshal(js)
	if err != nil {
		return nil, err
	}
	if err := patch(strict, requestPatches); err != nil {
		return nil, err
	}
	closeObjects(strict, Version)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(specURL, doc); err != nil {
		return nil, err
	}
	if err := c.AddResource(strictURL, strict); err != nil {
		return nil, err
	}
	s := &Spec{doc: doc, strict: strict, compiler: c, schemas: map[string]*jsonschema.Schema{}}
	for p := range s.doc["paths"].(map[string]any) {
		s.paths = append(s.paths, specPath{template: p, segs: strings.Split(strings.Trim(p, "/"), "/")})
	}
	return s, nil
}

func unmarshal(js []byte) (map[string]any, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, err
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("opensearch-openapi.yaml is not an object")
	}
	return m, nil
}

// specPatch corrects a defect of the specification that rejects what OpenSearch itself sends or
// accepts; why names the evidence. Everything else is checked as published.
type specPatch struct {
	schema, why string
	apply       func(schema map[string]any) error
}

// responsePatches apply to the spec that responses are checked against.
var responsePatches = []specPatch{
	{"#/components/schemas/_common___ShardFailure",
		"`primary` is required, but a search's failed_shards entries (ShardSearchFailure.toXContent) carry only shard, index, node and reason (e.g. opensearch-project/OpenSearch#20196)",
		func(sch map[string]any) error {
			req, _ := sch["required"].([]any)
			var kept []any
			for _, r := range req {
				if r != "primary" {
					kept = append(kept, r)
				}
			}
			if len(kept) == len(req) {
				return fmt.Errorf("no longer requires primary: drop this patch")
			}
			sch["required"] = kept
			return nil
		}},
	{"#/components/responses/delete_by_query___200/content/application~1json/schema",
		"oneOf [BulkByScrollResponseBase, {task}] where the second branch requires nothing, so every synchronous response matches both and oneOf fails; the branch is the wait_for_completion=false answer, which has a task",
		func(sch map[string]any) error {
			branches, _ := sch["oneOf"].([]any)
			if len(branches) != 2 {
				return fmt.Errorf("is no longer a two-branch oneOf: drop this patch")
			}
			task, _ := branches[1].(map[string]any)
			if _, ok := task["required"]; ok {
				return fmt.Errorf("task branch has required now: drop this patch")
			}
			task["required"] = []any{"task"}
			return nil
		}},
}

func patch(doc map[string]any, patches []specPatch) error {
	for _, p := range patches {
		sch, ok := lookup(doc, p.schema).(map[string]any)
		if !ok {
			return fmt.Errorf("spec patch: %s not found", p.schema)
		}
		if err := p.apply(sch); err != nil {
			return fmt.Errorf("spec patch %s %w", p.schema, err)
		}
	}
	return nil
}

// lookup follows a JSON pointer ("#/a/b~1c") in doc; nil when it leads nowhere.
func lookup(doc map[string]any, ptr string) any {
	var cur any = doc
	for _, part := range strings.Split(strings.TrimPrefix(ptr, "#/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// JSONCompatible turns YAML's map[any]any into map[string]any.
func JSONCompatible(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = JSONCompatible(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = JSONCompatible(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = JSONCompatible(e)
		}
		return v
	}
	return v
}

// Operation finds the spec operation for a concrete request path, preferring the template with
// the most literal segments (as the router does); it returns the template and the operation
// (nil when the spec has none for the method).
func (s *Spec) Operation(method, path string) (string, map[string]any) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	best, bestLiterals := "", -1
	for _, p := range s.paths {
		if len(p.segs) != len(segs) {
			continue
		}
		literals, ok := 0, true
		for i, ps := range p.segs {
			if strings.HasPrefix(ps, "{") {
				continue
			}
			if ps != segs[i] {
				ok = false
				break
			}
			literals++
		}
		if ok && literals > bestLiterals {
			best, bestLiterals = p.template, literals
		}
	}
	if best == "" {
		return "", nil
	}
	op, _ := s.doc["paths"].(map[string]any)[best].(map[string]any)[strings.ToLower(method)].(map[string]any)
	return best, op
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// resolve follows ref in the published spec.
func (s *Spec) resolve(ref string) map[string]any {
	m, _ := lookup(s.doc, ref).(map[string]any)
	return m
}

// compile compiles the schema at ptr of the document at base (specURL or strictURL), once.
func (s *Spec) compile(base, ptr string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.schemas[base+ptr]; ok {
		return sch, nil
	}
	sch, err := s.compiler.Compile(base + ptr)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", ptr, err)
	}
	s.schemas[base+ptr] = sch
	return sch, nil
}

// inVersion reports whether a spec node (an operation, a parameter, a schema) exists in
// OpenSearch version v by its x-version-added and x-version-removed.
func inVersion(node map[string]any, v string) bool {
	if added, ok := node["x-version-added"].(string); ok && compareVersions(added, v) > 0 {
		return false
	}
	if removed, ok := node["x-version-removed"].(string); ok && compareVersions(removed, v) <= 0 {
		return false
	}
	return true
}

// compareVersions compares dotted versions ("2.19", "3.0.0") numerically: -1, 0 or 1.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return cmp.Compare(x, y)
		}
	}
	return 0
}
