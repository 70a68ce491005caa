package memory

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

// MaxAgentIDLength bounds an agent_id of memory (a stored agent's UUID, or "inline:" and a
// configuration's name).
const MaxAgentIDLength = 256

// agentIDRule describes a valid agent_id for error messages.
const agentIDRule = "must be at most 256 characters without control characters, and not \"*\""

// fieldErrs gathers the field errors of one input, in the order found.
type fieldErrs []domain.FieldError

func (e *fieldErrs) add(field, format string, args ...any) {
	*e = append(*e, domain.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// err is the 400 listing them, or nil.
func (e fieldErrs) err() error {
	if len(e) == 0 {
		return nil
	}
	return domain.Invalid(e)
}

// validAgentID reports whether s may name the agent of a memory scope ("" is the shared scope).
func validAgentID(s string) bool {
	if s == sharedAgent || utf8.RuneCountInString(s) > MaxAgentIDLength || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// userID checks a required user_id.
func (e *fieldErrs) userID(field string, v *string) string {
	switch {
	case v == nil || *v == "":
		e.add(field, "is required")
		return ""
	case !domain.ValidUserID(*v):
		e.add(field, "%s", domain.UserIDRule)
	}
	return *v
}

// agentID checks an optional agent_id (nil and "" are the shared scope).
func (e *fieldErrs) agentID(field string, v *string) string {
	if v == nil {
		return ""
	}
	if !validAgentID(*v) {
		e.add(field, "%s", agentIDRule)
	}
	return *v
}

// text checks a required record text and returns it trimmed.
func (e *fieldErrs) text(field string, v *string) string {
	if v == nil {
		e.add(field, "is required")
		return ""
	}
	t := strings.TrimSpace(*v)
	switch n := utf8.RuneCountInString(t); {
	case !utf8.ValidString(t):
		e.add(field, "must be valid UTF-8")
	case n == 0:
		e.add(field, "must not be empty")
	case n > domain.MaxMemoryTextLength:
		e.add(field, "must be at most %d characters, not %d", domain.MaxMemoryTextLength, n)
	}
	return t
}

// label checks a block label.
func (e *fieldErrs) label(field string, v *string) string {
	if v == nil {
		e.add(field, "is required")
		return ""
	}
	if !domain.ValidBlockLabel(*v) {
		e.add(field, "%s", domain.BlockLabelRule)
	}
	return *v
}

// limit checks a block limit; nil is def.
func (e *fieldErrs) limit(field string, v *int, def int) int {
	if v == nil {
		return def
	}
	if *v < 1 || *v > domain.MaxBlockLimit {
		e.add(field, "must be between 1 and %d", domain.MaxBlockLimit)
	}
	return *v
}

// description checks a block description; nil is def.
func (e *fieldErrs) description(field string, v *string, def string) string {
	if v == nil {
		return def
	}
	if n := utf8.RuneCountInString(*v); n > domain.MaxBlockDescriptionLength || !utf8.ValidString(*v) {
		e.add(field, "must be valid UTF-8 of at most %d characters", domain.MaxBlockDescriptionLength)
	}
	return *v
}

// value checks a block value against its limit.
func (e *fieldErrs) value(field, v string, limit int) {
	if !utf8.ValidString(v) {
		e.add(field, "must be valid UTF-8")
		return
	}
	if n := utf8.RuneCountInString(v); n > limit {
		e.add(field, "is %d characters, over the block's limit of %d", n, limit)
	}
}

// checkScope refuses a scope the engine or a job should never hand the service.
func checkScope(sc domain.MemoryScope) error {
	var e fieldErrs
	if sc.Company == "" {
		e.add("company", "is required")
	}
	e.userID("user_id", &sc.UserID)
	e.agentID("agent_id", &sc.AgentID)
	return e.err()
}
