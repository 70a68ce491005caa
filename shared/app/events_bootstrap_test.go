package app_test

import (
	"context"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentorch/agentorch/infra/lambdarun"
	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
)

// TestEventsInvoke is `make invoke` for every sample event: each function is built as
// scripts/invoke builds it (lambdarun.LocalTags, for Linux on the host) and every event runs
// through the real bootstrap under the Runtime API stand-in, with the environment a running stack
// gives it (lambdarun.ConfigEnv, as scripts/invoke passes make dev's), against this test's
// stack. The HTTP events are replayed as TestEventsReplay replays them through the in-process
// handlers; the queue consumers' events get the records their placeholders name and must leave
// no batch item failed.
func TestEventsInvoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every function")
	}
	root := repoRoot(t)
	tpl := loadTemplate(t)
	files := eventFiles(t, root)
	env := localstack.NewTestEnv(t)
	log := slog.New(slog.DiscardHandler)
	// The records the placeholders name are made through the bootstraps too; only keys and
	// the ingestion behind the queue (make dev's event sources) run in-process.
	a := app.NewWithAWS(env.AWS, env.Config, log)
	env.RunEventSources(t, a.Processor)
	stackEnv := lambdarun.ConfigEnv(env.Config)

	bins := buildFunctions(t, root)
	fns := map[string]sam.Function{}
	queueFns := map[string]bool{}
	handlers := map[string]lambdaHandler{}
	for _, f := range tpl.Functions() {
		if queueFunction(f) {
			queueFns[f.Dir] = true
			continue
		}
		fns[f.Dir], handlers[f.Dir] = f, bootstrapHandler(bins[f.Dir], f.Dir, stackEnv)
	}
	r := &replayer{app: a, handlers: handlers, root: root}
	r.replayAll(t, tpl, files, fns, queueFns)

	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		dir, _, _ := strings.Cut(name, "-")
		if !queueFns[dir] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			secret := r.newKey(t, "company-"+name)
			vars := r.fillQueue(t, raw, secret)
			out, err := invoke(t.Context(), bins[dir], dir, stackEnv, fillSQS(t, raw, vars))
			if err != nil {
				t.Fatalf("invoke: %v; response %s", err, out)
			}
			var resp events.SQSEventResponse
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatalf("response %s: %v", out, err)
			}
			if len(resp.BatchItemFailures) > 0 {
				t.Errorf("batch item failures %+v", resp.BatchItemFailures)
			}
		})
	}
}

// buildFunctions builds every function of functions/ in parallel, as scripts/invoke does.
func buildFunctions(t *testing.T, root string) map[string]string {
	t.Helper()
	out := t.TempDir()
	bins := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, f := range app.Functions {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			bin := filepath.Join(out, f.Dir, "bootstrap")
			if _, err := lambdarun.Build(t.Context(), root, f.Dir, bin, lambdarun.LocalTags); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			bins[f.Dir] = bin
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return bins
}

// bootstrapHandler runs an API Gateway event through a function's bootstrap, once, as Lambda
// would: a cold start per event.
func bootstrapHandler(bin, dir string, env []string) lambdaHandler {
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		var resp events.APIGatewayV2HTTPResponse
		raw, err := json.Marshal(ev)
		if err != nil {
			return resp, err
		}
		out, err := invoke(ctx, bin, dir, env, raw)
		if err != nil {
			return resp, fmt.Errorf("%w; response %s", err, out)
		}
		if err := json.Unmarshal(out, &resp); err != nil {
			return resp, fmt.Errorf("response %s: %w", out, err)
		}
		return resp, nil
	}
}

func invoke(ctx context.Context, bin, dir string, env []string, event []byte) ([]byte, error) {
	var logs strings.Builder
	res, err := lambdarun.Run(ctx, lambdarun.Options{Bootstrap: bin, Function: dir, Event: event, Env: env, Stderr: &logs})
	if err != nil {
		return res.Response, fmt.Errorf("%s: %w\nlogs:\n%s", dir, err, logs.String())
	}
	return res.Response, nil
}

// fillQueue makes the records a queue event's placeholders name: a session with an execution
// (worker), a file in a completed knowledge base and a run id (the ingestion functions; the run
// is not the knowledge base's current one, so the job is a superseded delivery).
func (r *replayer) fillQueue(t *testing.T, raw []byte, secret string) map[string]string {
	t.Helper()
	has := func(p string) bool { return strings.Contains(string(raw), p) }
	vars := map[string]string{}
	if has(placeholderSession) || has(placeholderExecution) {
		vars[placeholderSession] = r.newSession(t, secret)
		_, vars[placeholderExecution] = r.execute(t, secret, vars[placeholderSession])
	}
	if has(placeholderKB) || has(placeholderFile) {
		vars[placeholderFile] = r.newFile(t, secret)
		vars[placeholderKB] = r.newKB(t, secret, vars[placeholderFile])
	}
	if has(placeholderRun) {
		vars[placeholderRun] = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
	}
	return vars
}

// fillSQS fills an SQS event's placeholders in, keeping each record's md5OfBody right.
func fillSQS(t *testing.T, raw []byte, vars map[string]string) []byte {
	t.Helper()
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	for i := range ev.Records {
		body := ev.Records[i].Body
		for k, v := range vars {
			body = strings.ReplaceAll(body, k, v)
		}
		if left := placeholder.FindString(body); left != "" {
			t.Fatalf("placeholder %s left unfilled", left)
		}
		ev.Records[i].Body, ev.Records[i].Md5OfBody = body, fmt.Sprintf("%x", md5.Sum([]byte(body)))
	}
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
