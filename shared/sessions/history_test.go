package sessions

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
)

// TestClipStoredCitations: a message's citations share its item and the run's budget, so its
// content gets what they leave.
func TestClipStoredCitations(t *testing.T) {
	cites := make([]domain.Citation, domain.MaxCitations)
	for i := range cites {
		cites[i] = domain.Citation{Index: i + 1, KnowledgeBaseID: "kb", FileID: "f", FileName: "a.txt", Text: strings.Repeat("\"", domain.CitationTextLength)}
	}
	size := citationBytes(cites)
	if size < domain.MaxCitations*2*domain.CitationTextLength || size > MaxStoredMessageBytes {
		t.Fatalf("citations take %d bytes", size)
	}
	msgs := []domain.Message{{Content: strings.Repeat("a", MaxStoredMessageBytes), Citations: cites}, {Content: "short"}}
	clipStored(msgs, MaxStoredRunBytes)
	if n := len(msgs[0].Content) + size; n > MaxStoredMessageBytes {
		t.Errorf("content and citations take %d bytes, over %d", n, MaxStoredMessageBytes)
	}
	if len(msgs[0].Content) < MaxStoredMessageBytes-size-100 || msgs[1].Content != "short" {
		t.Errorf("cut to %d bytes; want about %d, the rest whole", len(msgs[0].Content), MaxStoredMessageBytes-size)
	}
	msgs = []domain.Message{{Content: strings.Repeat("a", 1000), Citations: cites}}
	clipStored(msgs, size+400)
	if n := len(msgs[0].Content); n > 400 {
		t.Errorf("the run budget leaves 400 bytes for content, %d kept", n)
	}
}

func TestClipStored(t *testing.T) {
	msg := func(n int, unit string) domain.Message {
		return domain.Message{Content: strings.Repeat(unit, n/len(unit))}
	}
	tests := []struct {
		name   string
		msgs   []domain.Message
		budget int
		want   []int // lengths after clipping; -1 for a message left whole
	}{
		{"under the budget nothing changes", []domain.Message{msg(1000, "a"), msg(2000, "b")}, 3000, []int{-1, -1}},
		{"one message over the item limit", []domain.Message{msg(MaxStoredMessageBytes+10, "a"), msg(10, "b")}, MaxStoredRunBytes, []int{MaxStoredMessageBytes, -1}},
		{"the longest are cut to a common length", []domain.Message{msg(100, "a"), msg(5000, "b"), msg(8000, "c")}, 6100, []int{-1, 3000, 3000}},
		{"multibyte text is cut at a character", []domain.Message{msg(9000, "é€")}, 4001, []int{4001}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := make([]string, len(tt.msgs))
			for i, m := range tt.msgs {
				before[i] = m.Content
			}
			clipStored(tt.msgs, tt.budget)
			total := 0
			for i, m := range tt.msgs {
				total += len(m.Content)
				if !utf8.ValidString(m.Content) {
					t.Errorf("message %d is not valid UTF-8", i)
				}
				if tt.want[i] < 0 {
					if m.Content != before[i] {
						t.Errorf("message %d changed", i)
					}
					continue
				}
				if len(m.Content) > tt.want[i] || len(m.Content) < tt.want[i]-3 || !strings.HasSuffix(m.Content, "bytes]") ||
					!strings.HasPrefix(before[i], strings.SplitN(m.Content, "\n[truncated for storage:", 2)[0]) {
					t.Errorf("message %d: %d bytes, want %d: …%q", i, len(m.Content), tt.want[i], m.Content[max(len(m.Content)-60, 0):])
				}
			}
			if total > tt.budget {
				t.Errorf("%d bytes stored, budget %d", total, tt.budget)
			}
		})
	}
}

// historyStore is a Store whose History serves msgs (oldest first) the way the adapter does.
type historyStore struct {
	Store
	msgs []domain.Message
	read int
}

func (h *historyStore) History(_ context.Context, _ string, take func(domain.Message) bool) ([]domain.Message, error) {
	var out []domain.Message
	for i := len(h.msgs) - 1; i >= 0; i-- {
		h.read++
		if !take(h.msgs[i]) {
			break
		}
		out = append([]domain.Message{h.msgs[i]}, out...)
	}
	return out, nil
}

func TestHistoryBudget(t *testing.T) {
	m := func(role string, tokens int) domain.Message {
		return domain.Message{Role: role, Content: strings.Repeat("x", 4*tokens)}
	}
	msgs := []domain.Message{m("user", 50), m("assistant", 50), m("user", 30), m("assistant", 10), m("assistant", 20), m("user", 5), m("assistant", 5)}
	tests := []struct {
		name   string
		budget int
		want   int // messages kept, the newest
		read   int
	}{
		{"everything fits", 170, 7, 7},
		{"the oldest are dropped first", 70, 5, 6},
		{"a history never opens with an assistant message", 60, 2, 5},
		{"nothing fits", 4, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &historyStore{msgs: msgs}
			s := &Service{store: st}
			got, err := s.history(context.Background(), "sid", tt.budget, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.want || st.read != tt.read {
				t.Fatalf("kept %d, read %d; want %d, %d", len(got), st.read, tt.want, tt.read)
			}
			for i, h := range got {
				if want := msgs[len(msgs)-tt.want+i]; h.Role != want.Role || h.Content != want.Content {
					t.Errorf("message %d = %s of %d bytes", i, h.Role, len(h.Content))
				}
			}
		})
	}
}
