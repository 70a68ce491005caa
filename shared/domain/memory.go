package domain

import (
	"regexp"
	"sync"
	"time"
	"unicode/utf8"
)

// Memory across sessions (docs/memory.md): what an agent remembers of the end user a session
// serves (Session.UserID), under the company's control. Two kinds, both scoped to company +
// user + agent (or the company's shared memory of the user, AgentID ""): blocks, small labelled
// texts put into the system prompt on every turn, and records, facts searched by meaning.

// Memory limits.
const (
	// MaxUserIDLength bounds a session's user_id (an opaque string of the company's).
	MaxUserIDLength = 256
	// MaxMemoryTextLength bounds a record's text, in characters.
	MaxMemoryTextLength = 2000
	// DefaultBlockLimit is a block's limit, in characters, when neither its configuration nor
	// its creator gives one; MaxBlockLimit bounds any.
	DefaultBlockLimit = 2000
	MaxBlockLimit     = 10000
	// MaxMemoryBlocks bounds the blocks of one scope (declared in a configuration, or stored):
	// with MaxBlockLimit it bounds what blocks add to a prompt.
	MaxMemoryBlocks = 16
	// MaxBlockDescriptionLength bounds a block's description.
	MaxBlockDescriptionLength = 500
	// DefaultRecallTopK and MaxRecallTopK are how many records a turn recalls into the prompt
	// (memory.recall.top_k; 0 turns recall into the prompt off).
	DefaultRecallTopK = 5
	MaxRecallTopK     = 20
	// MaxExtractInstructionsLength bounds memory.extract.instructions.
	MaxExtractInstructionsLength = 4000
)

// Memory tool names: the built-in tools a react_agent with memory is given.
const (
	MemoryReplaceTool = "memory_replace"
	MemoryAppendTool  = "memory_append"
	MemorySaveTool    = "memory_save"
	MemorySearchTool  = "memory_search"
)

// MemoryTools lists the memory tools, which a configuration may not bind itself (they come with
// memory.enabled).
var MemoryTools = []string{MemoryReplaceTool, MemoryAppendTool, MemorySaveTool, MemorySearchTool}

// Kinds of MemorySource.
const (
	MemorySourceTool       = "tool"       // an agent's memory tool call in an execution
	MemorySourceExtraction = "extraction" // extracted after an execution's turn
	MemorySourceAPI        = "api"        // a person (an API key) through /api/v1/memory/
)

// MemoryConfig is a configuration's memory (its top-level "memory" field): it applies to every
// node of the configuration.
type MemoryConfig struct {
	Enabled bool
	// Shared: the agent reads and writes the user's memory shared across the company's agents
	// (AgentID "") instead of its own.
	Shared bool
	// Blocks are the blocks the prompt always shows (empty until written), in order.
	Blocks []MemoryBlockSpec
	// RecallTopK is how many records each turn recalls into the prompt (0: none).
	RecallTopK int
	Extract    MemoryExtract
}

// MemoryBlockSpec is one memory.blocks entry.
type MemoryBlockSpec struct {
	Label       string
	Description string
	Limit       int // characters; DefaultBlockLimit when not given
}

// MemoryExtract is memory.extract: after each turn, a model reads the user's message and the
// reply and saves the facts worth remembering as records.
type MemoryExtract struct {
	Enabled bool
	// Provider and Model name the extraction's model (memory.extract.llm_config); empty: the
	// entry node's.
	Provider, Model string
	// Instructions, when set, replace the default guidance of what is worth remembering.
	Instructions string
}

// MemoryScope is whose memory, and which agent's: AgentID "" is the user's memory shared across
// the company's agents. An inline session's agent is InlineAgentID of its configuration's name.
type MemoryScope struct {
	Company string `json:"company"`
	UserID  string `json:"user_id"`
	AgentID string `json:"agent_id"` // as queued in MemoryExtractJob
}

// InlineAgentID is the memory agent of a session made from an inline configuration: there is no
// stored agent, so its memory is keyed by the configuration's name.
func InlineAgentID(name string) string { return "inline:" + name }

// MemorySource is who wrote a record or a block: an execution (a tool call or the extraction
// after it) or a person through the API (the key).
type MemorySource struct {
	Type        string // MemorySourceTool, MemorySourceExtraction or MemorySourceAPI
	ExecutionID string // tool, extraction
	SessionID   string // tool, extraction
	KeyID       string // api: the API key that wrote it
}

// MemoryRecord is one remembered fact.
type MemoryRecord struct {
	ID      string
	Company string
	UserID  string
	AgentID string // "" shared
	Text    string
	Source  MemorySource
	// EmbeddingModel is the embedder's name (Embedder.Name) and Dimensions its vector's size:
	// they name the index that holds the record's vector.
	EmbeddingModel string
	Dimensions     int
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// MemoryBlock is one labelled text of a scope; its label is unique in its scope.
type MemoryBlock struct {
	ID          string
	Company     string
	UserID      string
	AgentID     string // "" shared
	Label       string
	Description string
	Value       string
	Limit       int
	Source      MemorySource // of the last write
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// MemoryFilter selects memory in a list: a user's (UserID), an agent's (AgentID, with
// AgentSet: AgentID "" then means the shared memory only), or both; neither lists the
// company's.
type MemoryFilter struct {
	UserID   string
	AgentID  string
	AgentSet bool
}

// MemoryHit is one record a search found, best first.
type MemoryHit struct {
	Record MemoryRecord
	Score  float64
}

// blockLabelRE is what a block label looks like: it names the block in the prompt and in tool
// arguments.
var blockLabelRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`) })

// BlockLabelRule describes a valid block label for error messages.
const BlockLabelRule = "must be 1 to 64 lowercase letters, digits or _ and start with a letter"

// ValidBlockLabel reports whether s may label a block.
func ValidBlockLabel(s string) bool { return blockLabelRE().MatchString(s) }

// UserIDRule describes a valid user_id for error messages.
const UserIDRule = "must be a string of 1 to 256 characters without control characters"

// ValidUserID reports whether s may be a session's user_id.
func ValidUserID(s string) bool {
	if s == "" || utf8.RuneCountInString(s) > MaxUserIDLength || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// MemoryExtractJob is one extraction after a turn, as queued: everything the extraction needs,
// so that it reads nothing of the session.
type MemoryExtractJob struct {
	Scope       MemoryScope `json:"scope"`
	SessionID   string      `json:"session_id"`
	ExecutionID string      `json:"execution_id"`
	// Provider and Model are the extraction's model; Instructions memory.extract.instructions.
	Provider     string `json:"provider,omitempty"`
	Model        string `json:"model,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	// User is the text of the user's message, Reply the text of the visible reply, each cut to
	// MaxExtractTextLength characters.
	User  string `json:"user"`
	Reply string `json:"reply"`
}

// MaxExtractTextLength bounds each text an extraction job carries (SQS takes 256 KiB).
const MaxExtractTextLength = 16000

// MemoryExtractHeading begins the system prompt of a memory extraction (shared/memory): the
// offline model (shared/localmodel) knows an extraction by it and answers one in kind.
const MemoryExtractHeading = "# Memory extraction"
