package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp/kb"
)

// The test ids of a collection's edit (studio/README.md).
const (
	collectionEdit, collectionEditForm            = "collection-edit", "collection-edit-form"
	collectionEditName, collectionEditDescription = "collection-edit-name", "collection-edit-description"
	collectionEditSave, collectionEditCancel      = "collection-edit-save", "collection-edit-cancel"
)

// TestCollectionEdit: an opened collection's name and description are edited in the page (Edit,
// then the form, then Save): a name of spaces is refused by the API at its field and saves
// nothing; Cancel and Escape leave the collection as it was and give the focus back to Edit; a
// good change shows at once in the heading and the summary, is the API's (a reload shows it),
// keeps the files and shows in the list (knowledge bases name collections by id: the API's
// TestCollectionPatch holds that a rename leaves them as they were).
// axe-core finds nothing on the form, with its error, or after the save, light or dark.
func TestCollectionEdit(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	file := s.uploadText("returns.txt", returnsPolicy)
	coll := s.api("POST", "/api/v1/collections/", map[string]any{"name": "Support", "description": "answers"})
	id := coll["id"].(string)
	s.call("POST", "/api/v1/collections/"+id+"/files/", map[string]any{"file_ids": []string{file}})

	s.navigate("/studio/knowledge/collections/" + id)
	s.waitText(collectionMember, "returns.txt", patience)
	s.click(collectionEdit)
	s.visible(collectionEditForm)
	s.waitFor("the focus on the name", func() bool { return s.focused() == collectionEditName })
	s.waitValue(collectionEditName, "Support")
	s.waitValue(collectionEditDescription, "answers")
	s.axeSchemes("a collection's edit form")

	// A name of spaces: the API's error at the name, nothing saved.
	s.fill(collectionEditName, "   ")
	s.report.Clean(t)
	s.click(collectionEditSave)
	s.fieldAt("name")
	if v := s.eval(`document.querySelector('[data-testid="collection-edit-name"]').getAttribute('aria-invalid')`); v != "true" {
		t.Errorf("the refused name is not marked invalid: %v", v)
	}
	s.axeSchemes("a collection's edit form with an error at its name")
	s.report.Reset() // the 400, provoked on purpose
	if got := s.api("GET", "/api/v1/collections/"+id+"/", nil); got["name"] != "Support" {
		t.Errorf("a refused name was saved: %v", got["name"])
	}

	// Cancel, then Escape: as it was, the focus back on Edit.
	s.click(collectionEditCancel)
	s.waitFor("the focus back on Edit", func() bool { return s.focused() == collectionEdit })
	s.click(collectionEdit)
	s.fill(collectionEditName, "Thrown away")
	s.keys(kb.Escape)
	s.waitFor("the form closed by Escape", func() bool {
		return s.eval(`document.querySelector('[data-testid="collection-edit-form"]') === null`) == true
	})
	s.waitFor("the focus back on Edit after Escape", func() bool { return s.focused() == collectionEdit })
	if h := s.eval(`document.querySelector('section.card h2').textContent`); h != "Support" {
		t.Errorf("after Cancel and Escape the heading reads %v", h)
	}

	// A good change: at once, and after a reload.
	s.click(collectionEdit)
	s.fill(collectionEditName, "Help desk")
	s.fill(collectionEditDescription, "Answers for the help desk")
	s.click(collectionEditSave)
	s.waitFor("the heading renamed", func() bool { return s.eval(`document.querySelector('section.card h2').textContent`) == "Help desk" })
	s.waitText(collectionSummary, "Answers for the help desk", patience)
	s.axeSchemes("a collection after its edit")
	s.navigate("/studio/knowledge/collections/" + id)
	s.waitText(collectionSummary, "Answers for the help desk", patience)
	s.waitFor("the heading renamed after a reload", func() bool { return s.eval(`document.querySelector('section.card h2').textContent`) == "Help desk" })
	s.waitText(collectionMember, "returns.txt", patience)
	got := s.api("GET", "/api/v1/collections/"+id+"/", nil)
	if got["name"] != "Help desk" || got["description"] != "Answers for the help desk" || got["data_source_count"] != 1.0 {
		t.Errorf("the API holds %v", got)
	}
	// The list shows the new name.
	s.navigate("/studio/knowledge/collections")
	s.waitText(collectionRow, "Help desk", patience)
	if rows := s.texts(collectionRow); len(rows) != 1 || strings.Contains(rows[0], "Support") {
		t.Errorf("the collections list reads %q", rows)
	}
	s.report.Clean(t)
}
