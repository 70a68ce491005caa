package e2e

import (
	"strings"
	"testing"
)

// The memory panel's names (studio/README.md).
const (
	sessionUser, memoryPanel, memoryUserID     = "session-user", "memory-panel", "memory-user-id"
	memoryBlock, memoryBlockEdit               = "memory-block", "memory-block-edit"
	memoryBlockInput, memoryBlockSave          = "memory-block-input", "memory-block-save"
	memoryRecord, memoryRecordText             = "memory-record", "memory-record-text"
	memoryRecordEdit, memoryRecordInput        = "memory-record-edit", "memory-record-input"
	memoryRecordSave, memoryRecordDelete       = "memory-record-save", "memory-record-delete"
	memoryRecordDeleteConfirm, memoryBlockText = "memory-record-delete-confirm", "memory-block-text"
)

// say sends text in the chat and returns the answer's text once the chat settles with n messages.
func (s *studio) say(text string, n int) string {
	s.t.Helper()
	s.fill(chatInput, text)
	s.click(chatSend)
	v := s.chatSettled(n)
	return v[n-1].Text
}

// TestMemoryPanel: a session opened for a user shows what its agent remembers of the user beside
// the chat, refreshed after each turn; a block's value and a record's text edited there, and a
// record deleted there, are what the agent's next turn is given (the local model echoes its system
// prompt); a session without a user shows no panel.
func TestMemoryPanel(t *testing.T) {
	s := newStudio(t)
	keeper := s.createAgent(`{"name":"Keeper","agent_type":"react_agent","system_prompt":"You help.",
		"llm_config":{"provider":"local"},"memory":{"blocks":[{"label":"human"}],"extract":{}}}`)
	s.signIn()

	s.click(navPlayground)
	s.choose(agentPick, keeper, false)
	s.fill(sessionUser, "ann")
	s.click(sessionOpen)
	s.visible(chatInput)
	s.waitText(memoryUserID, "ann", patience)
	if got := s.texts(memoryRecord); len(got) != 0 {
		t.Errorf("a new user's panel shows records %q", got)
	}

	s.say(`memory_save {"text":"Ann likes tea"}`, 2)
	s.waitText(memoryRecord, "Ann likes tea", patience)
	s.say(`memory_append {"label":"human","text":"Name: Ann."}`, 4)
	s.waitText(memoryBlock, "Name: Ann.", patience)

	s.click(memoryRecordEdit)
	s.fill(memoryRecordInput, "Ann likes green tea with honey")
	s.axe("the playground's memory panel, a record in edit")
	s.click(memoryRecordSave)
	s.waitText(memoryRecordText, "Ann likes green tea with honey", patience)
	s.click(memoryBlockEdit)
	s.fill(memoryBlockInput, "Name: Ann Lee.")
	s.click(memoryBlockSave)
	s.waitText(memoryBlockText, "Name: Ann Lee.", patience)

	reply := s.say("What do I drink?", 6)
	if !strings.Contains(reply, "Ann likes green tea with honey") || !strings.Contains(reply, "Name: Ann Lee.") {
		t.Errorf("after the edits, the next turn's prompt lacks the edited record or block: %q", reply)
	}
	if strings.Contains(reply, "Ann likes tea") {
		t.Errorf("after the edit, the next turn's prompt still holds the record's old text: %q", reply)
	}

	s.click(memoryRecordDelete)
	s.click(memoryRecordDeleteConfirm)
	s.waitText(memoryPanel, "No records yet", patience)
	if got := s.texts(memoryRecord); len(got) != 0 {
		t.Errorf("the deleted record is still shown: %q", got)
	}
	reply = s.say("Anything else?", 8)
	if strings.Contains(reply, "tea") || !strings.Contains(reply, "Name: Ann Lee.") {
		t.Errorf("after the delete, the next turn's prompt holds the record or lacks the block: %q", reply)
	}
	s.axe("the playground's memory panel")

	// A session without a user: no memory, no panel (the chat answers first, so the session was read).
	s.click(navPlayground) // no open session: the chat's input shows once the new one is open
	s.choose(agentPick, keeper, false)
	s.fill(sessionUser, "")
	s.click(sessionOpen)
	s.visible(chatInput)
	s.say("Hello", 2)
	if n := s.eval(`document.querySelectorAll('` + tid(memoryPanel) + `').length`); n != float64(0) {
		t.Errorf("a session without a user shows %v memory panels", n)
	}
	s.report.Clean(t)
}
