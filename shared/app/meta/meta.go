// Package meta builds the meta function: health, the OpenAPI document and the studio's static
// files. Its routes are public and read nothing stored, so it does not build core.App (whose
// store and authenticator need the DynamoDB client): the meta binary links no AWS service client
// and initialises none (TestFunctionsLinkOnlyTheirProviders, BenchmarkPackageInit).
package meta

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/studio"
)

// Group builds the meta group and serves the studio's static files at /studio/ beside it: API
// Gateway's $default route already brings those paths to this function. Its routes are public,
// so it has no authenticator and reads no token-signing secret.
func Group(cfg platform.Config, log *slog.Logger) *api.Group {
	g := api.NewMeta(api.Options{Log: log, MaxBodyBytes: cfg.MaxBodyBytes})
	g.Mount(studio.Prefix, studio.Handler(studio.Options{StreamBaseURL: cfg.StreamBaseURL, UploadOrigins: uploadOrigins(cfg)}))
	return g
}

// Handler is Group as the meta function's main serves it (platform.MainHTTP).
func Handler(_ context.Context, cfg platform.Config, log *slog.Logger) (http.Handler, error) {
	return Group(cfg, log), nil
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
