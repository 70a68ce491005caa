package app_test

import (
	"log/slog"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/platform"
)

// TestUnbuildableKnowledge: a configuration the knowledge feature's adapters refuse (an
// embedding provider the deployment does not offer) is an error from building each function
// that serves the feature, the same error every time, never a handler or processor left to fail
// later; functions without the feature build as usual. Nothing here touches the network.
func TestUnbuildableKnowledge(t *testing.T) {
	cfg, err := platform.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.EmbeddingProvider = "no-such-provider"
	a := app.NewWithAWS(aws.Config{Region: "us-east-1"}, cfg, slog.New(slog.DiscardHandler))
	k1, err1 := a.Knowledge()
	k2, err2 := a.Knowledge()
	if err1 == nil || k1 != nil || k2 != nil || err2 != err1 {
		t.Fatalf("Knowledge() = %v, %v then %v, %v; want nil and one error", k1, err1, k2, err2)
	}
	for _, f := range app.Functions {
		var got any
		var err error
		if f.HTTP != nil {
			got, err = a.Handler(f.Dir)
		} else {
			got, err = a.Processor(f.Dir)
		}
		switch f.Dir {
		case "files", "collections", "knowledge", "ingest", "ingestfailed":
			if err == nil {
				t.Errorf("%s built with an unbuildable knowledge feature", f.Dir)
			}
		default:
			if err != nil || got == nil {
				t.Errorf("%s: %v, want it built", f.Dir, err)
			}
		}
	}
}
