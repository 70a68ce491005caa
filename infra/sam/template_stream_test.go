package sam

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTemplateStreamURL pins the streaming execute's way on AWS: StreamFunction alone is behind a
// function URL, which streams (RESPONSE_STREAM), is public because the handler authenticates
// (AuthType NONE, with lambda:InvokeFunction granted for URL calls only), and lets the studio's
// origins post with the headers the API reads. The URL reaches the studio through an output and
// the meta function's STREAM_BASE_URL.
func TestTemplateStreamURL(t *testing.T) {
	tpl := repoTemplate(t)
	var streams []string
	for _, f := range tpl.Functions() {
		if f.URL != nil {
			streams = append(streams, f.LogicalID)
		}
		if f.URL != nil && len(f.Routes)+len(f.Fallbacks)+len(f.Queues) > 0 {
			t.Errorf("%s has a function URL and API routes or queues: one way in per function", f.LogicalID)
		}
	}
	if diff := cmp.Diff([]string{"StreamFunction"}, streams); diff != "" {
		t.Fatalf("functions with a URL (-want +got):\n%s", diff)
	}
	url := tpl.Properties("StreamFunction")["FunctionUrlConfig"]
	want := map[string]any{
		"AuthType": "NONE", "InvokeMode": "RESPONSE_STREAM",
		"Cors": map[string]any{
			"AllowOrigins":  ref("StreamAllowedOrigins"),
			"AllowMethods":  []any{"POST"},
			"AllowHeaders":  []any{"authorization", "x-api-key", "content-type"},
			"ExposeHeaders": []any{"x-request-id", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"},
			"MaxAge":        600,
		},
	}
	if diff := cmp.Diff(want, url); diff != "" {
		t.Errorf("FunctionUrlConfig (-want +got):\n%s", diff)
	}
	origins, _ := tpl.Parameters["StreamAllowedOrigins"].(map[string]any)
	if origins["Type"] != "CommaDelimitedList" || origins["Default"] != "*" {
		t.Errorf("parameter StreamAllowedOrigins = %v, want a CommaDelimitedList defaulting to *", origins)
	}
	perm := tpl.Resources["StreamFunctionUrlInvoke"]
	wantPerm := map[string]any{"Action": "lambda:InvokeFunction", "FunctionName": ref("StreamFunction"), "Principal": "*", "InvokedViaFunctionUrl": true}
	if perm.Type != "AWS::Lambda::Permission" || !cmp.Equal(wantPerm, perm.Properties) {
		t.Errorf("StreamFunctionUrlInvoke = %s %v, want AWS::Lambda::Permission %v", perm.Type, perm.Properties, wantPerm)
	}
	urlAttr := map[string]any{"Fn::GetAtt": []any{"StreamFunctionUrl", "FunctionUrl"}}
	out, _ := tpl.Outputs["StreamUrl"].(map[string]any)
	if diff := cmp.Diff(urlAttr, out["Value"]); diff != "" {
		t.Errorf("output StreamUrl (-want +got):\n%s", diff)
	}
	env, _ := tpl.Properties("MetaFunction")["Environment"].(map[string]any)
	vars, _ := env["Variables"].(map[string]any)
	if diff := cmp.Diff(urlAttr, vars["STREAM_BASE_URL"]); diff != "" {
		t.Errorf("MetaFunction STREAM_BASE_URL (-want +got):\n%s", diff)
	}
}
