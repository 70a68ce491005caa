package memory

// RecordInput is a record to create (POST /api/v1/memory/records/); api decodes it. A nil field
// was not sent.
type RecordInput struct {
	UserID  *string `json:"user_id"`
	AgentID *string `json:"agent_id"`
	Text    *string `json:"text"`
}

// RecordUpdate is a record's change (PATCH /api/v1/memory/records/{id}/): its text, re-embedded.
type RecordUpdate struct {
	Text *string `json:"text"`
}

// BlockInput is a block to create (POST /api/v1/memory/blocks/); Limit nil is DefaultBlockLimit.
type BlockInput struct {
	UserID      *string `json:"user_id"`
	AgentID     *string `json:"agent_id"`
	Label       *string `json:"label"`
	Value       *string `json:"value"`
	Description *string `json:"description"`
	Limit       *int    `json:"limit"`
}

// BlockUpdate is a block's change (PATCH /api/v1/memory/blocks/{id}/): the fields sent.
type BlockUpdate struct {
	Value       *string `json:"value"`
	Description *string `json:"description"`
	Limit       *int    `json:"limit"`
}
