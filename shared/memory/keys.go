package memory

import (
	"crypto/sha256"
	"encoding/hex"
)

// UserKey is the knowledge-base id a user's records carry in the vector index: "mem-" and the
// first 32 hex digits of sha256(company NUL user id). A hash, so that no user id (any string of
// the company's) reaches the index, and so that it can never be a knowledge base's UUID.
func UserKey(company, userID string) string {
	sum := sha256.Sum256([]byte(company + "\x00" + userID))
	return "mem-" + hex.EncodeToString(sum[:16])
}

// sharedAgent is the agent id AgentTag gives the shared scope; no agent may have it
// (validAgentID), so that no agent's records are ever found as the shared ones.
const sharedAgent = "*"

// AgentTag is the tag a record's vector carries, and its searches filter on, for the agent whose
// memory it is: "agent:" + the agent id, "agent:*" for the user's memory shared across agents.
func AgentTag(agentID string) string {
	if agentID == "" {
		return "agent:" + sharedAgent
	}
	return "agent:" + agentID
}
