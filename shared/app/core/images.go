package core

import (
	"net/http"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/images"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/s3"
)

// Auth builds the auth group (tokens, API keys).
func Auth(a *App) (*api.Group, error) {
	return api.NewAuth(a.Auth, a.Options()).WithAudit(a.Audit), nil
}

// Images builds the images group (uploads and their /media/ URLs).
func Images(a *App) (*api.Group, error) {
	return api.NewImages(ImageStore(a), publicBaseURL(a.Config), a.Options()), nil
}

// ImageStore is the images feature on the bucket (executions read uploaded images from it too).
func ImageStore(a *App) *images.Service {
	return images.New(s3.NewStore(s3.NewClient(a.AWS, a.Config.S3Endpoint), a.Config.Bucket))
}

// publicBaseURL is the base of the /media/ URLs: PUBLIC_BASE_URL (a custom domain; locally the
// dev server), or else the API Gateway stage the request came through. Never the Host header.
func publicBaseURL(cfg platform.Config) func(*http.Request) string {
	return func(r *http.Request) string {
		if cfg.PublicBaseURL != "" {
			return cfg.PublicBaseURL
		}
		u, _ := platform.StageURL(r.Context())
		return u
	}
}
