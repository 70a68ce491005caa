package sam

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"testing"
)

// localOnly are the variables a function needs against stand-ins that template.yaml does not
// set on AWS (endpoints the SDK resolves there, secrets read from Secrets Manager there). SAM
// passes a variable of an --env-vars file only when the template declares it for the function,
// so these take effect once template.yaml declares them (empty on AWS); the files carry them
// ready.
var localOnly = []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_SQS", "TOKEN_SECRET", "CREDENTIALS_KEY"}

// declaredEnv is, per function of the template, the environment variables it gets there: the
// Globals' and its own, merged as SAM merges them.
func declaredEnv(t *testing.T, tmpl *Template) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, f := range tmpl.Functions() {
		var names []string
		env, _ := tmpl.Properties(f.LogicalID)["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		for k := range vars {
			names = append(names, k)
		}
		sort.Strings(names)
		out[f.LogicalID] = names
	}
	return out
}

// TestLocalEnvFiles: the sam local environment files (make dev's stand-ins, and LocalStack's one
// endpoint) name every function of template.yaml and no other, and give each function every
// variable the template gives it, plus the local-only ones; a value of every variable is a
// string (SAM's format), and no variable outside those is set.
func TestLocalEnvFiles(t *testing.T) {
	tmpl := repoTemplate(t)
	want := declaredEnv(t, tmpl)
	if len(want) == 0 {
		t.Fatal("the template has no functions")
	}
	for _, name := range []string{"local-env.json", "localstack-env.json"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			var file map[string]map[string]any
			if err := json.Unmarshal(b, &file); err != nil {
				t.Fatalf("%s is not SAM's --env-vars format ({\"<LogicalId>\": {\"VAR\": \"value\"}}): %v", name, err)
			}
			for fn := range file {
				if _, ok := want[fn]; !ok {
					t.Errorf("%s names %s, which is no function of template.yaml", name, fn)
				}
			}
			for fn, vars := range want {
				got, ok := file[fn]
				if !ok {
					t.Errorf("%s has no entry for %s", name, fn)
					continue
				}
				for _, v := range vars {
					if _, ok := got[v]; !ok {
						t.Errorf("%s: %s lacks %s, which template.yaml gives it", name, fn, v)
					}
				}
				for _, v := range localOnly {
					if _, ok := got[v]; !ok {
						t.Errorf("%s: %s lacks %s (needed against stand-ins)", name, fn, v)
					}
				}
				for k, val := range got {
					if _, isString := val.(string); !isString {
						t.Errorf("%s: %s.%s is %T, want a string", name, fn, k, val)
					}
					if !slices.Contains(vars, k) && !slices.Contains(localOnly, k) {
						t.Errorf("%s: %s sets %s, which neither template.yaml nor the local-only list names", name, fn, k)
					}
				}
			}
		})
	}
}
