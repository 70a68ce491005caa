package core

import (
	"context"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/studio"
)

// Meta builds the meta group (health, OpenAPI document) and serves the studio's static files at
// /studio/ beside it: API Gateway's $default route already brings those paths to this function.
// Its routes are public, so it reads no token-signing secret.
func Meta(a *App) (*api.Group, error) {
	g := api.NewMeta(a.Options())
	g.Mount(studio.Prefix, studio.Handler(studio.Options{StreamBaseURL: a.Config.StreamBaseURL, UploadOrigins: uploadOrigins(a.Config)}))
	return g, nil
}

// uploadOrigins are where the studio's presigned uploads go: the S3 endpoint locally, the
// bucket's virtual-hosted address on AWS (as the SDK presigns).
func uploadOrigins(cfg platform.Config) []string {
	if cfg.S3Endpoint != "" {
		return []string{cfg.S3Endpoint}
	}
	if cfg.Bucket == "" || cfg.Region == "" {
		return nil
	}
	return []string{"https://" + cfg.Bucket + ".s3." + cfg.Region + ".amazonaws.com"}
}

// ExecutionFailed builds the processor of the execution dead-letter queue: a job the queue gave
// up on marks its execution failed, so that no poll waits for it forever. It needs only the
// store (no engine, models or tools: it runs nothing).
func ExecutionFailed(a *App) (func(ctx context.Context, body string) error, error) {
	return sessions.New(sessions.Deps{Store: a.Store}, sessions.Limits{}).HandleDeadLetter, nil
}
