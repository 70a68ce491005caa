package localmodel_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/localmodel"
)

// TestMemoryExtraction: a request whose system prompt begins with the extraction heading is
// answered with the JSON of the first-person statements of the user's message (not of the
// reply, not questions); any other request with the same text is echoed as before.
func TestMemoryExtraction(t *testing.T) {
	turn := "<user_message>\nHi there! I live in Lyon. My daughter is called Zoé.\nI'm allergic to peanuts\n" +
		"Do I need a visa? Where is the station? I've got two cats!\n</user_message>\n\n" +
		"<assistant_reply>\nI am an assistant. My answer is no.\n</assistant_reply>"
	cases := []struct {
		name, system, text string
		want               []string
	}{
		{"the user's statements", domain.MemoryExtractHeading + "\n\nPick out facts.", turn,
			[]string{"I live in Lyon.", "My daughter is called Zoé.", "I'm allergic to peanuts", "I've got two cats!"}},
		{"nothing worth remembering", domain.MemoryExtractHeading, "<user_message>What time is it?</user_message>", []string{}},
		{"an untagged message", domain.MemoryExtractHeading, "Mine is blue. I like jazz. Irish tea is fine.", []string{"I like jazz."}},
	}
	for _, c := range cases {
		resp, err := localmodel.Model{}.Converse(context.Background(), domain.ModelRequest{System: c.system,
			Turns: []domain.Turn{{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartText, Text: c.text}}}}})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Memories []string `json:"memories"`
		}
		if err := json.Unmarshal([]byte(resp.Text()), &got); err != nil {
			t.Fatalf("%s: the answer is no JSON: %v: %s", c.name, err, resp.Text())
		}
		if d := cmp.Diff(c.want, got.Memories); d != "" || resp.StopReason != domain.StopEndTurn {
			t.Errorf("%s (stop %s) (-want +got):\n%s", c.name, resp.StopReason, d)
		}
	}
	resp, err := localmodel.Model{}.Converse(context.Background(), domain.ModelRequest{System: "You are helpful. " + domain.MemoryExtractHeading,
		Turns: []domain.Turn{{Role: domain.RoleUser, Parts: []domain.Part{{Type: domain.PartText, Text: "I live in Lyon."}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[local model] You said: I live in Lyon."; len(resp.Text()) < len(want) || resp.Text()[:len(want)] != want {
		t.Errorf("a prompt that does not begin with the heading: %q, want the echo", resp.Text())
	}
}
