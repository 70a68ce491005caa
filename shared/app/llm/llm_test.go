package llm_test

import (
	"log/slog"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/app/llm"
	"github.com/agentorch/agentorch/shared/app/tooling"
	"github.com/agentorch/agentorch/shared/platform"
)

// TestModelsAreTheCatalogs: the engine's model set has an adapter for exactly the providers the
// agent catalog offers (tooling.Catalog), with the same default, so that a model picked from
// the catalog runs; and the catalog's tools are the registry's built-ins the engine binds.
func TestModelsAreTheCatalogs(t *testing.T) {
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"} {
		t.Setenv(v, "")
	}
	for _, cfg := range []platform.Config{
		{ModelProvider: "local"},
		{ModelProvider: "bedrock"},
		{ModelProvider: "openai", OpenAIBaseURL: "http://127.0.0.1:1/v1", InLambda: true},
	} {
		a := core.NewWithAWS(aws.Config{Region: "us-east-1"}, cfg, slog.New(slog.DiscardHandler))
		set := llm.Models(a)
		cat := tooling.Catalog(a)
		var offered []string
		for _, p := range cat.Providers {
			offered = append(offered, p.Name)
			if p.Default != (p.Name == set.Default) {
				t.Errorf("%+v: %s default %v, the model set's default is %s", cfg, p.Name, p.Default, set.Default)
			}
		}
		var built []string
		for name := range set.ByName {
			built = append(built, name)
		}
		slices.Sort(offered)
		slices.Sort(built)
		if !slices.Equal(offered, built) || len(built) == 0 {
			t.Errorf("%+v: catalog offers %v, the engine built %v", cfg, offered, built)
		}
		var tools []string
		for _, s := range cat.Tools {
			tools = append(tools, s.Name)
			if s.Description == "" || s.Schema["type"] != "object" {
				t.Errorf("tool %s: description %q, schema %v", s.Name, s.Description, s.Schema)
			}
		}
		if want := tooling.Registry(a).Names(); !slices.Equal(tools, want) {
			t.Errorf("catalog tools %v, registry %v", tools, want)
		}
	}
}
