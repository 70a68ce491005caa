package sam

// Checks of the template's references and environment: what cfn-lint and CloudFormation would
// refuse (unknown names, circular dependencies) and credentials written in clear.

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// secretName is an environment variable name that suggests a credential.
var secretName = regexp.MustCompile(`(?i)(key|secret|token|password|credential)`)

// TestTemplateNoPlainSecrets checks that no credential is written into a function's environment
// or a parameter shown in clear: variables named like one carry a reference (an ARN read at run
// time), never a literal but the empty one, and parameters named like one are NoEcho.
func TestTemplateNoPlainSecrets(t *testing.T) {
	tpl := repoTemplate(t)
	for _, f := range tpl.Functions() {
		env, _ := tpl.Properties(f.LogicalID)["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		for name, v := range vars {
			// An empty literal holds nothing: it only declares the variable for sam local.
			if lit, literal := v.(string); literal && lit != "" && secretName.MatchString(name) {
				t.Errorf("%s: environment variable %s holds a literal; pass an ARN and read the secret at run time", f.LogicalID, name)
			}
			if r := refID(v); r != "" && secretName.MatchString(name) && !strings.HasSuffix(name, "_ARN") {
				t.Errorf("%s: environment variable %s carries %s itself; pass its ARN instead", f.LogicalID, name, r)
			}
		}
	}
	for name, p := range tpl.Parameters {
		m, _ := p.(map[string]any)
		if secretName.MatchString(name) && !strings.HasSuffix(name, "Arn") && m["NoEcho"] != true {
			t.Errorf("parameter %s looks like a credential but is not NoEcho", name)
		}
	}
}

// TestTemplateReferences checks, as cfn-lint would, that every Ref, GetAtt and ${…} in a Sub names
// a resource, a parameter or a pseudo parameter of the template.
func TestTemplateReferences(t *testing.T) {
	tpl := repoTemplate(t)
	// SAM generates the AWS::Lambda::Url of a FunctionUrlConfig.
	generated := map[string]bool{}
	for _, f := range tpl.Functions() {
		if f.URL != nil {
			generated[f.URLLogicalID()] = true
		}
	}
	known := func(name string) bool {
		_, res := tpl.Resources[name]
		_, par := tpl.Parameters[name]
		return res || par || generated[name] || strings.HasPrefix(name, "AWS::")
	}
	var refs []string
	collectRefs(map[string]any{"Globals": tpl.Globals, "Outputs": tpl.Outputs}, &refs)
	for _, r := range tpl.Resources {
		collectRefs(r.Properties, &refs)
	}
	if len(refs) < 10 {
		t.Fatalf("found only %d references; the walk is broken", len(refs))
	}
	for _, name := range refs {
		if !known(name) {
			t.Errorf("reference to unknown %q", name)
		}
	}
}

// TestTemplateFunctionsDoNotReferenceApi guards against a circular dependency CloudFormation
// refuses: the HTTP API's routes reference every function, so a function (or the Globals it
// inherits) must not reference the API, e.g. to pass its URL in the environment. Only the
// events' ApiId may.
func TestTemplateFunctionsDoNotReferenceApi(t *testing.T) {
	tpl := repoTemplate(t)
	for _, f := range tpl.Functions() {
		props := maps.Clone(tpl.Properties(f.LogicalID))
		delete(props, "Events")
		var refs []string
		collectRefs(props, &refs)
		if slices.Contains(refs, "Api") {
			t.Errorf("%s references Api outside its events: circular dependency", f.LogicalID)
		}
	}
}

var subVar = regexp.MustCompile(`\$\{([^!}][^}]*)\}`)

func collectRefs(v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["Ref"].(string); ok && len(x) == 1 {
			*out = append(*out, r)
		}
		if ga, ok := x["Fn::GetAtt"].([]any); ok && len(x) == 1 {
			*out = append(*out, ga[0].(string))
		}
		if s, ok := x["Fn::Sub"].(string); ok && len(x) == 1 {
			for _, m := range subVar.FindAllStringSubmatch(s, -1) {
				name, _, _ := strings.Cut(m[1], ".")
				*out = append(*out, name)
			}
		}
		for _, e := range x {
			collectRefs(e, out)
		}
	case []any:
		for _, e := range x {
			collectRefs(e, out)
		}
	}
}
