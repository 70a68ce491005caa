package sam

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wrap puts a YAML value at Resources.R.Properties.V of a minimal template.
func wrap(v string) string {
	return "Resources:\n  R:\n    Type: AWS::X::Y\n    Properties:\n      V: " + v + "\n"
}

func TestParseIntrinsicTags(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want any
	}{
		{"ref", `!Ref AppTable`, map[string]any{"Ref": "AppTable"}},
		{"ref pseudo", `!Ref AWS::Region`, map[string]any{"Ref": "AWS::Region"}},
		{"ref of a number-like name stays a string", `!Ref 2010`, map[string]any{"Ref": "2010"}},
		{"getatt dotted", `!GetAtt VectorDomain.DomainEndpoint`, map[string]any{"Fn::GetAtt": []any{"VectorDomain", "DomainEndpoint"}}},
		{"getatt nested attribute splits at the first dot", `!GetAtt Stack.Outputs.Url`, map[string]any{"Fn::GetAtt": []any{"Stack", "Outputs.Url"}}},
		{"getatt list", `!GetAtt [Queue, Arn]`, map[string]any{"Fn::GetAtt": []any{"Queue", "Arn"}}},
		{"sub string", `!Sub "https://${Api}.execute-api.${AWS::Region}"`, map[string]any{"Fn::Sub": "https://${Api}.execute-api.${AWS::Region}"}},
		{"sub list with variables", `!Sub ["${A}-x", {A: !Ref B}]`, map[string]any{"Fn::Sub": []any{"${A}-x", map[string]any{"A": map[string]any{"Ref": "B"}}}}},
		{"join", `!Join [",", [a, !Ref B]]`, map[string]any{"Fn::Join": []any{",", []any{"a", map[string]any{"Ref": "B"}}}}},
		{"if", `!If [IsProd, 5, !Ref AWS::NoValue]`, map[string]any{"Fn::If": []any{"IsProd", 5, map[string]any{"Ref": "AWS::NoValue"}}}},
		{"select getazs", `!Select [0, !GetAZs ""]`, map[string]any{"Fn::Select": []any{0, map[string]any{"Fn::GetAZs": ""}}}},
		{"split importvalue", `!Split [",", !ImportValue Shared-Subnets]`, map[string]any{"Fn::Split": []any{",", map[string]any{"Fn::ImportValue": "Shared-Subnets"}}}},
		{"equals not", `!Not [!Equals [!Ref Env, prod]]`, map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "Env"}, "prod"}}}}},
		{"and or condition", `!And [!Condition A, !Or [!Condition B, !Condition C]]`, map[string]any{"Fn::And": []any{
			map[string]any{"Condition": "A"},
			map[string]any{"Fn::Or": []any{map[string]any{"Condition": "B"}, map[string]any{"Condition": "C"}}},
		}}},
		{"findinmap", `!FindInMap [Sizes, !Ref Env, Memory]`, map[string]any{"Fn::FindInMap": []any{"Sizes", map[string]any{"Ref": "Env"}, "Memory"}}},
		{"base64", `!Base64 hello`, map[string]any{"Fn::Base64": "hello"}},
		{"cidr", `!Cidr ["10.0.0.0/16", 6, 5]`, map[string]any{"Fn::Cidr": []any{"10.0.0.0/16", 6, 5}}},
		{"block mapping under a tag", "!Sub\n        - ${X}\n        - X: 1", map[string]any{"Fn::Sub": []any{"${X}", map[string]any{"X": 1}}}},
		{"long form passes through", `{"Fn::GetAtt": [A, B]}`, map[string]any{"Fn::GetAtt": []any{"A", "B"}}},
		{"int", `180`, 180},
		{"quoted int stays a string", `"180"`, "180"},
		{"bool", `true`, true},
		{"date stays a string", `2010-09-09`, "2010-09-09"},
		{"null", `null`, nil},
		{"float", `0.5`, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse([]byte(wrap(tt.yaml)))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, tpl.Resources["R"].Properties["V"]); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSections(t *testing.T) {
	src := `AWSTemplateFormatVersion: 2010-09-09
Transform: AWS::Serverless-2016-10-31
Parameters:
  Size: {Type: String, Default: small}
Globals:
  Function: {Timeout: 29}
Resources:
  Q:
    Type: AWS::SQS::Queue
    Metadata: {Note: x}
  Bare:
    Type: AWS::SNS::Topic
Outputs:
  QueueUrl: {Value: !Ref Q}
`
	tpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := &Template{
		Resources: map[string]Resource{
			"Q":    {Type: "AWS::SQS::Queue", Properties: map[string]any{}, Metadata: map[string]any{"Note": "x"}},
			"Bare": {Type: "AWS::SNS::Topic", Properties: map[string]any{}, Metadata: map[string]any{}},
		},
		Globals:    map[string]any{"Function": map[string]any{"Timeout": 29}},
		Outputs:    map[string]any{"QueueUrl": map[string]any{"Value": map[string]any{"Ref": "Q"}}},
		Parameters: map[string]any{"Size": map[string]any{"Type": "String", "Default": "small"}},
	}
	if diff := cmp.Diff(want, tpl); diff != "" {
		t.Errorf("template (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // part of the error message
	}{
		{"empty", ``, "empty"},
		{"syntax", "Resources: [\n", "template:"},
		{"not a mapping", "- a\n- b\n", "top level must be a mapping"},
		{"no resources", "Outputs: {}\n", "Resources is missing"},
		{"resources not a mapping", "Resources: [a]\n", "Resources must be a mapping"},
		{"globals not a mapping", "Globals: 1\nResources: {R: {Type: A::B::C}}\n", "Globals must be a mapping"},
		{"resource not a mapping", "Resources:\n  R: 1\n", "resource R: must be a mapping"},
		{"no type", "Resources:\n  R: {Properties: {}}\n", "resource R: Type is missing"},
		{"type not a string", "Resources:\n  R: {Type: [a]}\n", "resource R: Type is missing"},
		{"properties not a mapping", "Resources:\n  R: {Type: A::B::C, Properties: [1]}\n", "resource R: Properties must be a mapping"},
		{"unknown tag", wrap(`!Reff X`), "unknown tag !Reff"},
		{"getatt without a dot", wrap(`!GetAtt Queue`), "not Resource.Attribute"},
		{"getatt list of one", wrap(`!GetAtt [Queue]`), "needs [Resource, Attribute]"},
		{"getatt mapping", wrap(`!GetAtt {A: B}`), "needs a string or a list"},
		{"ref without a name", wrap(`!Ref ""`), "!Ref needs a name"},
		{"ref of a list", wrap(`!Ref [a]`), "!Ref needs a name"},
		{"duplicate key", "Resources:\n  R: {Type: A::B::C}\n  R: {Type: A::B::D}\n", `key "R" defined twice`},
		{"merge key", "Resources:\n  R:\n    <<: {Type: A::B::C}\n", "merge keys"},
		{"two documents", "Resources: {R: {Type: A::B::C}}\n---\nResources: {}\n", "more than one YAML document"},
		{"non-scalar key", "Resources:\n  ? [a]\n  : {Type: A::B::C}\n", "keys must be scalars"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(t.TempDir() + "/nope.yaml"); err == nil {
		t.Fatal("Load of a missing file succeeded")
	}
}
