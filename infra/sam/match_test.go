package sam

import (
	"testing"
)

const routingTemplate = `Resources:
  Pets:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Dog: {Type: HttpApi, Properties: {Method: GET, Path: /pets/dog/1}}
        One: {Type: HttpApi, Properties: {Method: GET, Path: "/pets/dog/{id}"}}
        Proxy: {Type: HttpApi, Properties: {Method: ANY, Path: "/pets/{proxy+}"}}
        Root: {Type: HttpApi, Properties: {Method: ANY, Path: /pets}}
  Cats:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Cat: {Type: HttpApi, Properties: {Method: POST, Path: /pets}}
        Owner: {Type: HttpApi, Properties: {Method: GET, Path: "/pets/{kind}/owner"}}
  Default:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        All: {Type: HttpApi}
`

func TestMatch(t *testing.T) {
	tpl, err := Parse([]byte(routingTemplate))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path string
		wantID       string
		wantRoute    Route
	}{
		{"GET", "/pets/dog/1", "Pets", Route{"GET", "/pets/dog/1"}},                // literal beats variable
		{"GET", "/pets/dog/2", "Pets", Route{"GET", "/pets/dog/{id}"}},             // variable beats greedy
		{"get", "/pets/dog/2/", "Pets", Route{"GET", "/pets/dog/{id}"}},            // trailing slash, lower-case method
		{"POST", "/pets/dog/2", "Pets", Route{"ANY", "/pets/{proxy+}"}},            // wrong method falls to greedy ANY
		{"GET", "/pets/cat/owner", "Cats", Route{"GET", "/pets/{kind}/owner"}},     // variable beats greedy
		{"GET", "/pets/cat/owner?x=1", "Cats", Route{"GET", "/pets/{kind}/owner"}}, // query ignored
		{"POST", "/pets", "Cats", Route{"POST", "/pets"}},                          // exact method beats ANY on one path
		{"DELETE", "/pets/", "Pets", Route{"ANY", "/pets"}},                        // ANY takes methods nobody defined
		{"GET", "/pets/a/b/c/d", "Pets", Route{"ANY", "/pets/{proxy+}"}},           // greedy takes many segments
		{"GET", "/dogs", "Default", Route{"ANY", DefaultRoute}},                    // nothing else: $default
		{"GET", "/", "Default", Route{"ANY", DefaultRoute}},                        // root
		{"GET", "/pets/dog/1/extra/more", "Pets", Route{"ANY", "/pets/{proxy+}"}},  // too long for literal routes
		{"PATCH", "/pets/cat/owner", "Pets", Route{"ANY", "/pets/{proxy+}"}},       // method not on Cats' route
		{"GET", "/petsx", "Default", Route{"ANY", DefaultRoute}},                   // prefix of a segment is no match
		{"OPTIONS", "/pets/dog/1", "Pets", Route{"ANY", "/pets/{proxy+}"}},         // any method
		{"GET", "/pets/dog/1/", "Pets", Route{"GET", "/pets/dog/1"}},               // literal with slash
		{"HEAD", "/other/path", "Default", Route{"ANY", DefaultRoute}},             // any method on $default
		{"GET", "/pets/dog", "Pets", Route{"ANY", "/pets/{proxy+}"}},               // shorter than /pets/dog/{id}
		{"GET", "/pets/dog/%7Bid%7D", "Pets", Route{"GET", "/pets/dog/{id}"}},      // a segment is a segment
		{"PUT", "/pets/x/owner/", "Pets", Route{"ANY", "/pets/{proxy+}"}},          // wrong method, slash
		{"GET", "//pets", "Pets", Route{"ANY", "/pets"}},                           // leading slashes trimmed
		{"GET", "/pets/dog/2/owner", "Pets", Route{"ANY", "/pets/{proxy+}"}},       // no 3-var route of that length
		{"GET", "/pets/dog/owner", "Pets", Route{"GET", "/pets/dog/{id}"}},         // the literal further left wins
	}
	for _, tt := range tests {
		id, r, ok := tpl.Match(tt.method, tt.path)
		if !ok || id != tt.wantID || r != tt.wantRoute {
			t.Errorf("Match(%s %s) = %s %v %v, want %s %v", tt.method, tt.path, id, r, ok, tt.wantID, tt.wantRoute)
		}
	}
}

func TestMatchWithoutDefault(t *testing.T) {
	tpl, err := Parse([]byte("Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      Events:\n        A: {Type: HttpApi, Properties: {Method: GET, Path: /a}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if id, r, ok := tpl.Match("GET", "/b"); ok {
		t.Errorf("Match(GET /b) = %s %v, want no match", id, r)
	}
	if _, _, ok := tpl.Match("POST", "/a"); ok {
		t.Error("Match(POST /a) matched a GET route")
	}
}

// TestMatchRepoTemplate checks the routing of the real template for the requests that matter:
// each group receives its own paths with or without the trailing slash and with wrong methods
// (so its handler answers 404/405 in the JSON envelope), and anything else reaches MetaFunction.
func TestMatchRepoTemplate(t *testing.T) {
	tpl := repoTemplate(t)
	tests := []struct {
		method, path, want string
	}{
		{"GET", "/api/v1/health/", "MetaFunction"},
		{"POST", "/api/v1/health", "MetaFunction"},
		{"GET", "/api/v1/openapi.json", "MetaFunction"},
		{"GET", "/api/v1/unknown/", "MetaFunction"},
		{"GET", "/", "MetaFunction"},
		{"GET", "/api/v1/agent/", "AgentsFunction"},
		{"POST", "/api/v1/agent", "AgentsFunction"},
		{"DELETE", "/api/v1/agent/", "AgentsFunction"},
		{"POST", "/api/v1/agent/validate/", "AgentsFunction"},
		{"GET", "/api/v1/agent/3f0c/versions/current/", "AgentsFunction"},
		{"POST", "/api/v1/agent/3f0c/versions/", "AgentsFunction"},
		{"GET", "/api/v1/agent/3f0c/unknown/deeper/", "AgentsFunction"},
		{"POST", "/api/v1/auth/token/", "AuthFunction"},
		{"GET", "/api/v1/auth/token", "AuthFunction"},
		{"GET", "/api/v1/auth", "MetaFunction"}, // no auth route owns the bare prefix
		{"POST", "/api/v1/api-keys/", "AuthFunction"},
		{"PUT", "/api/v1/api-keys", "AuthFunction"},
		{"DELETE", "/api/v1/api-keys/9a1b/", "AuthFunction"},
		{"GET", "/api/v1/api-keys/9a1b/x", "AuthFunction"},
		{"POST", "/api/v1/sessions/", "SessionsFunction"},
		{"GET", "/api/v1/sessions", "SessionsFunction"},
		{"PUT", "/api/v1/sessions/", "SessionsFunction"},
		{"GET", "/api/v1/sessions/from-agent/?agent_key=support-assistant", "SessionsFunction"},
		{"POST", "/api/v1/sessions/feedback/", "SessionsFunction"},
		{"GET", "/api/v1/sessions/feedback/", "SessionsFunction"}, // GET /sessions/{id}: the handler answers 405
		{"DELETE", "/api/v1/sessions/5d8f4c1e/", "SessionsFunction"},
		{"GET", "/api/v1/sessions/5d8f4c1e/unknown/", "SessionsFunction"},
		{"POST", "/api/v1/runtime/5d8f4c1e/execute/", "RuntimeFunction"},
		{"GET", "/api/v1/runtime/5d8f4c1e/execute", "RuntimeFunction"},
		{"GET", "/api/v1/runtime/5d8f4c1e/messages/?limit=10", "RuntimeFunction"},
		{"GET", "/api/v1/runtime/5d8f4c1e/events/", "RuntimeFunction"},
		{"GET", "/api/v1/runtime/5d8f4c1e/executions/9a1b/", "RuntimeFunction"},
		{"GET", "/api/v1/runtime/5d8f4c1e/", "RuntimeFunction"},
		{"GET", "/api/v1/runtime", "MetaFunction"}, // no runtime route owns the bare prefix
		{"POST", "/api/v1/images/upload/", "ImagesFunction"},
		{"POST", "/api/v1/images/upload", "ImagesFunction"},
		{"GET", "/api/v1/images/upload/", "ImagesFunction"}, // the handler answers 405
		{"POST", "/api/v1/images/other/", "ImagesFunction"},
		{"GET", "/api/v1/images", "MetaFunction"}, // no images route owns the bare prefix
		{"GET", "/media/5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f.png", "ImagesFunction"},
		{"GET", "/media/5d8f4c1e.png/", "ImagesFunction"},
		{"DELETE", "/media/5d8f4c1e.png", "ImagesFunction"},
		{"GET", "/media/a/b.png", "ImagesFunction"}, // the handler answers 404
		{"GET", "/media", "MetaFunction"},
		{"GET", "/api/v1/media/5d8f4c1e.png", "MetaFunction"},
	}
	for _, tt := range tests {
		id, r, ok := tpl.Match(tt.method, tt.path)
		if !ok || id != tt.want {
			t.Errorf("Match(%s %s) = %s (%v), want %s", tt.method, tt.path, id, r, tt.want)
		}
	}
}
