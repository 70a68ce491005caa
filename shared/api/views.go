package api

// The small answers of the meta, auth, images and sessions groups. Their members are declared
// in the order encoding/json wrote them when they were maps (sorted by key), so that their bytes
// stay the same.

// healthJSON is the health check's answer.
type healthJSON struct {
	Status string `json:"status"`
}

// tokenJSON is an access token exchanged for an API key.
type tokenJSON struct {
	AccessToken string `json:"access_token"`
	ExpiresIn   int    `json:"expires_in"`
	TokenType   string `json:"token_type"`
}

// imageUploadJSON is an uploaded image.
type imageUploadJSON struct {
	MediaType string `json:"media_type"`
	Size      int    `json:"size"`
	URL       string `json:"url"`
}

// sessionCreatedJSON is a session created from a configuration.
type sessionCreatedJSON struct {
	ConfigHash string `json:"config_hash"`
	SessionID  string `json:"session_id"`
	Success    bool   `json:"success"`
}

// sessionFromAgentJSON is a session created from a stored agent.
type sessionFromAgentJSON struct {
	AgentID    string `json:"agent_id"`
	AgentName  string `json:"agent_name"`
	ConfigHash string `json:"config_hash"`
	SessionID  string `json:"session_id"`
	Success    bool   `json:"success"`
}
