package embeddings

import "github.com/agentorch/agentorch/shared/backoff"

// policy is the retry policy of one call to a hosted provider.
func (o *Options) policy() backoff.Policy {
	return backoff.Policy{MaxRetries: o.MaxRetries, BaseDelay: o.BaseDelay, MaxDelay: maxDelay}
}
