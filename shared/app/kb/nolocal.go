//go:build nolocal

package kb

import "github.com/agentorch/agentorch/shared/embeddings"

// localEmbedder offers no local embedding provider: this build (a Lambda function's) leaves the
// model's code out. A knowledge base that names local gets a 400 saying it is not available
// here (embeddings.Providers), and EMBEDDING_PROVIDER=local refuses to start.
func localEmbedder(string) embeddings.LocalLoader { return nil }
