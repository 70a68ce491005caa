package domain

import "time"

// UsageCount is what a company's API keys and agents used: the counters of a usage report.
type UsageCount struct {
	Requests        int64 // runs of an execute, a resume or a queued job that reached a model answer
	Executions      int64 // executions begun (a resume continues one)
	InputTokens     int64
	OutputTokens    int64
	EmbeddingTokens int64
	CostUSD         float64 // of the priced model calls
	Unpriced        int64   // requests with a model call of a model without a price
}

// Add sums counts.
func (c *UsageCount) Add(o UsageCount) {
	c.Requests += o.Requests
	c.Executions += o.Executions
	c.InputTokens += o.InputTokens
	c.OutputTokens += o.OutputTokens
	c.EmbeddingTokens += o.EmbeddingTokens
	c.CostUSD += o.CostUSD
	c.Unpriced += o.Unpriced
}

// UsageEntry is one counter: a company's usage on one UTC day by one API key with one agent.
// KeyID is empty for a caller without a key id, AgentID for a session of an inline
// configuration.
type UsageEntry struct {
	Company string
	Day     time.Time // midnight UTC
	KeyID   string
	AgentID string
	UsageCount
}
