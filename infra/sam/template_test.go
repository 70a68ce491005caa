package sam

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// repoTemplate loads the project's template.yaml, found by walking up to go.mod.
func repoTemplate(t *testing.T) *Template {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	tpl, err := Load(filepath.Join(dir, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func ref(name string) map[string]any { return map[string]any{"Ref": name} }

func TestTemplateFunctions(t *testing.T) {
	want := []Function{
		{
			LogicalID: "AgentsFunction", CodeURI: ".", Dir: "agents",
			Routes: []Route{
				{"POST", "/api/v1/agent"},
				{"DELETE", "/api/v1/agent/{id}"},
				{"GET", "/api/v1/agent/{id}"},
				{"GET", "/api/v1/agent/{id}/versions/current"},
				{"GET", "/api/v1/agent"},
				{"GET", "/api/v1/agent/{id}/versions"},
				{"PATCH", "/api/v1/agent/{id}"},
				{"PUT", "/api/v1/agent/{id}"},
				{"POST", "/api/v1/agent/validate"},
			},
			Fallbacks: []Route{{"ANY", "/api/v1/agent"}, {"ANY", "/api/v1/agent/{proxy+}"}},
		},
		{
			LogicalID: "AuthFunction", CodeURI: ".", Dir: "auth",
			Routes: []Route{
				{"POST", "/api/v1/api-keys"},
				{"POST", "/api/v1/auth/token"},
				{"GET", "/api/v1/api-keys"},
				{"DELETE", "/api/v1/api-keys/{id}"},
			},
			Fallbacks: []Route{{"ANY", "/api/v1/auth/{proxy+}"}, {"ANY", "/api/v1/api-keys"}, {"ANY", "/api/v1/api-keys/{proxy+}"}},
		},
		{
			LogicalID: "MetaFunction", CodeURI: ".", Dir: "meta",
			Routes:    []Route{{"GET", "/api/v1/health"}, {"GET", "/api/v1/openapi.json"}},
			Fallbacks: []Route{{"ANY", DefaultRoute}, {"ANY", "/api/v1/health"}},
		},
	}
	if diff := cmp.Diff(want, repoTemplate(t).Functions()); diff != "" {
		t.Errorf("Functions (-want +got):\n%s", diff)
	}
}

func TestTemplateFunctionSettings(t *testing.T) {
	tpl := repoTemplate(t)
	wantEnv := map[string]any{
		"TABLE_NAME":          ref("AppTable"),
		"BUCKET_NAME":         ref("MediaBucket"),
		"INGEST_QUEUE_URL":    ref("IngestQueue"),
		"TOKEN_SECRET_ARN":    ref("TokenSigningSecret"),
		"LOG_FORMAT":          "json",
		"OPENSEARCH_ENDPOINT": map[string]any{"Fn::GetAtt": []any{"VectorDomain", "DomainEndpoint"}},
	}
	crud := map[string]any{"DynamoDBCrudPolicy": map[string]any{"TableName": ref("AppTable")}}
	secret := map[string]any{"AWSSecretsManagerGetSecretValuePolicy": map[string]any{"SecretArn": ref("TokenSigningSecret")}}
	wantPolicies := map[string]any{
		"MetaFunction":   nil, // public endpoints: no access to data or secrets
		"AgentsFunction": []any{crud, secret},
		"AuthFunction":   []any{crud, secret},
	}
	fns := tpl.Functions()
	if len(fns) != len(wantPolicies) {
		t.Fatalf("%d functions, want %d", len(fns), len(wantPolicies))
	}
	for _, f := range fns {
		p := tpl.Properties(f.LogicalID)
		got := map[string]any{
			"Runtime": p["Runtime"], "Architectures": p["Architectures"], "Handler": p["Handler"],
			"MemorySize": p["MemorySize"], "Timeout": p["Timeout"],
			"Env":      p["Environment"].(map[string]any)["Variables"],
			"Policies": p["Policies"],
			"Metadata": tpl.Resources[f.LogicalID].Metadata,
		}
		want := map[string]any{
			"Runtime": "provided.al2023", "Architectures": []any{"arm64"}, "Handler": "bootstrap",
			"MemorySize": 256, "Timeout": 29,
			"Env":      wantEnv,
			"Policies": wantPolicies[f.LogicalID],
			"Metadata": map[string]any{"BuildMethod": "makefile"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", f.LogicalID, diff)
		}
	}
}

// TestTemplateRoutesDeployable checks what API Gateway would refuse or silently drop: every
// HttpApi event is on the one API, no route path ends in "/", and no method and path is taken
// twice.
func TestTemplateRoutesDeployable(t *testing.T) {
	tpl := repoTemplate(t)
	var apis []string
	for id, r := range tpl.Resources {
		if r.Type == TypeHTTPAPI {
			apis = append(apis, id)
		}
	}
	if !slices.Equal(apis, []string{"Api"}) {
		t.Fatalf("HttpApi resources = %v, want [Api]", apis)
	}
	cors, _ := tpl.Resources["Api"].Properties["CorsConfiguration"].(map[string]any)
	for _, h := range []string{"x-api-key", "authorization", "content-type"} {
		if !slices.Contains(cors["AllowHeaders"].([]any), any(h)) {
			t.Errorf("CorsConfiguration.AllowHeaders lacks %s", h)
		}
	}
	seen := map[Route]string{}
	for _, f := range tpl.Functions() {
		events := tpl.Properties(f.LogicalID)["Events"].(map[string]any)
		for name, ev := range events {
			props := ev.(map[string]any)["Properties"].(map[string]any)
			if diff := cmp.Diff(ref("Api"), props["ApiId"]); diff != "" {
				t.Errorf("%s.%s: ApiId (-want +got):\n%s", f.LogicalID, name, diff)
			}
		}
		for _, r := range append(slices.Clone(f.Routes), f.Fallbacks...) {
			if r.Path != DefaultRoute && (!strings.HasPrefix(r.Path, "/") || strings.HasSuffix(r.Path, "/")) {
				t.Errorf("%s: route %s %s must start with / and not end with /", f.LogicalID, r.Method, r.Path)
			}
			if other, dup := seen[r]; dup {
				t.Errorf("route %s %s is on both %s and %s", r.Method, r.Path, other, f.LogicalID)
			}
			seen[r] = f.LogicalID
		}
	}
}

func TestTemplateData(t *testing.T) {
	tpl := repoTemplate(t)
	tables := []Table{{
		LogicalID: "AppTable", HashKey: "pk", RangeKey: "sk",
		Attributes:   map[string]string{"pk": "S", "sk": "S", "gsi1pk": "S", "gsi1sk": "S"},
		GSIs:         []Index{{Name: "gsi1", HashKey: "gsi1pk", RangeKey: "gsi1sk", Projection: "ALL"}},
		TTLAttribute: "ttl",
	}}
	if diff := cmp.Diff(tables, tpl.Tables()); diff != "" {
		t.Errorf("Tables (-want +got):\n%s", diff)
	}
	queues := []Queue{
		{LogicalID: "IngestDeadLetterQueue"},
		{LogicalID: "IngestQueue", VisibilityTimeout: 180, DeadLetterTarget: "IngestDeadLetterQueue", MaxReceiveCount: 5},
	}
	if diff := cmp.Diff(queues, tpl.Queues()); diff != "" {
		t.Errorf("Queues (-want +got):\n%s", diff)
	}
	buckets := []Bucket{{LogicalID: "MediaBucket", ExpirePrefixes: map[string]int{"tmp/": 1}}}
	if diff := cmp.Diff(buckets, tpl.Buckets()); diff != "" {
		t.Errorf("Buckets (-want +got):\n%s", diff)
	}

	props := func(id string) map[string]any { return tpl.Resources[id].Properties }
	checks := []struct {
		name      string
		got, want any
	}{
		{"table billing", props("AppTable")["BillingMode"], "PAY_PER_REQUEST"},
		{"table PITR", props("AppTable")["PointInTimeRecoverySpecification"], map[string]any{"PointInTimeRecoveryEnabled": true}},
		{"table SSE", props("AppTable")["SSESpecification"], map[string]any{"SSEEnabled": true}},
		{"bucket public access", props("MediaBucket")["PublicAccessBlockConfiguration"], map[string]any{
			"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true}},
		{"bucket SSE", props("MediaBucket")["BucketEncryption"] != nil, true},
		{"DLQ retention", props("IngestDeadLetterQueue")["MessageRetentionPeriod"], 1209600},
		{"secret", props("TokenSigningSecret")["GenerateSecretString"], map[string]any{"PasswordLength": 64, "ExcludePunctuation": true}},
		{"opensearch version", props("VectorDomain")["EngineVersion"], "OpenSearch_2.19"},
		{"opensearch instance", props("VectorDomain")["ClusterConfig"].(map[string]any)["InstanceType"], ref("OpenSearchInstanceType")},
		{"opensearch instance default", tpl.Parameters["OpenSearchInstanceType"].(map[string]any)["Default"], "t3.small.search"},
		{"opensearch EBS", props("VectorDomain")["EBSOptions"], map[string]any{"EBSEnabled": true, "VolumeType": "gp3", "VolumeSize": 10}},
		{"opensearch node-to-node", props("VectorDomain")["NodeToNodeEncryptionOptions"], map[string]any{"Enabled": true}},
		{"opensearch at rest", props("VectorDomain")["EncryptionAtRestOptions"], map[string]any{"Enabled": true}},
		{"opensearch HTTPS", props("VectorDomain")["DomainEndpointOptions"].(map[string]any)["EnforceHTTPS"], true},
		{"api url", tpl.Outputs["ApiUrl"].(map[string]any)["Value"], map[string]any{"Fn::Sub": "https://${Api}.execute-api.${AWS::Region}.${AWS::URLSuffix}"}},
		{"table output", tpl.Outputs["TableName"].(map[string]any)["Value"], ref("AppTable")},
		{"bucket output", tpl.Outputs["BucketName"].(map[string]any)["Value"], ref("MediaBucket")},
		{"queue output", tpl.Outputs["IngestQueueUrl"].(map[string]any)["Value"], ref("IngestQueue")},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	// Physical names are left to CloudFormation so that stacks can coexist.
	for id, r := range tpl.Resources {
		for _, name := range []string{"TableName", "BucketName", "QueueName", "DomainName", "Name", "FunctionName"} {
			if _, ok := r.Properties[name]; ok {
				t.Errorf("%s sets %s", id, name)
			}
		}
	}
}

// TestTemplateReferences checks, as cfn-lint would, that every Ref, GetAtt and ${…} in a Sub names
// a resource, a parameter or a pseudo parameter of the template.
func TestTemplateReferences(t *testing.T) {
	tpl := repoTemplate(t)
	known := func(name string) bool {
		_, res := tpl.Resources[name]
		_, par := tpl.Parameters[name]
		return res || par || strings.HasPrefix(name, "AWS::")
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
