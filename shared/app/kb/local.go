//go:build !nolocal

package kb

import (
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/embeddings/local"
)

// localEmbedder is the local embedding provider over the model's cache directory (nil without
// one). Builds with tag nolocal (make build, SAM: the Lambda functions, where no cache directory
// is ever configured) get nolocal.go's instead and do not link the model's code; the dev server,
// the tests and scripts/invoke's bootstraps, whose knowledge bases embed locally, link it.
func localEmbedder(dir string) embeddings.LocalLoader {
	if dir == "" {
		return nil
	}
	return local.Loader(dir)
}
