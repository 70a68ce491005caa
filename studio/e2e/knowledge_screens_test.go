package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The Knowledge screens' test ids (studio/README.md): the sub-navigation, a collection opened,
// a knowledge base opened and a file's chunks.
const (
	knowledgeFiles, knowledgeCollections, knowledgeBases = "knowledge-files", "knowledge-collections", "knowledge-bases"
	uploadDrop                                           = "upload-drop"
	collectionRow, collectionLink, collectionBack        = "collection-row", "collection-link", "collection-back"
	collectionMember, collectionRemove                   = "collection-member", "collection-remove"
	collectionAddFile, collectionAdd                     = "collection-add-file", "collection-add"
	collectionDelete, collectionDeleteConfirm            = "collection-delete", "collection-delete-confirm"
	collectionSummary                                    = "collection-summary"
	kbRow, kbLink, kbSource, kbChunksLink                = "kb-row", "kb-link", "kb-source", "kb-chunks-link"
	kbChunkSize, kbChunkOverlap, kbSplitBy               = "kb-chunk-size", "kb-chunk-overlap", "kb-split-by"
	chunkRow, chunkText, chunksSummary, chunksBack       = "chunk-row", "chunk-text", "chunks-summary", "chunks-back"
)

// guide is a file of 30 numbered lines of 57 characters: chunks of 100 characters (the least
// split_by char allows) hold one line each.
func guide() string {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "Step %02d of the guide: turn the dial one notch and wait.\n", i)
	}
	return b.String()
}

var stepNumber = regexp.MustCompile(`Step (\d\d)`)

// TestKnowledgeScreens: files, collections and knowledge bases are screens apart (each its own
// address under one sub-navigation, one h1, none holding another's forms); a collection opens to
// its files, takes a file in and lets one go, and is deleted after a confirmation (its files
// stay); a knowledge base built from a file with small chunks opens to its files, and the file's
// chunks read in document order, twenty a page, the second page going on where the first ended.
// axe-core finds nothing on any screen reached, light or dark, and the opened screens do not
// shift as they load (CLS ≤ 0.1 with 300 ms of API latency).
func TestKnowledgeScreens(t *testing.T) {
	s := newStudio(t)
	s.signIn()
	s.click(navKnowledge)
	dir := t.TempDir()
	var paths []string
	for name, text := range map[string]string{"guide.txt": guide(), "returns.txt": returnsPolicy} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	s.do("choose the files", patience, chromedp.SetUploadFiles(chromedp.CSS(tid(uploadInput)), paths))
	s.waitText(fileRow, "guide.txt", patience)
	s.waitText(fileRow, "returns.txt", patience)

	// Apart: each screen at its address, with its own forms only.
	for _, sc := range []struct {
		link, path, here, absent string
	}{
		{knowledgeFiles, "/studio/knowledge/files", uploadDrop, collectionName},
		{knowledgeCollections, "/studio/knowledge/collections", collectionName, uploadDrop},
		{knowledgeBases, "/studio/knowledge/bases", kbName, collectionName},
	} {
		s.click(sc.link)
		s.visible(sc.here)
		s.listsLoaded()
		if p := s.eval(`location.pathname`); p != sc.path {
			t.Errorf("%s leads to %v, want %s", sc.link, p, sc.path)
		}
		if s.eval(fmt.Sprintf(`document.querySelector(%q) !== null`, tid(sc.absent))) != false {
			t.Errorf("%s holds %s too", sc.path, sc.absent)
		}
		if cur := s.eval(`document.querySelector('nav[aria-label="Knowledge"] [aria-current=page]')?.dataset.testid`); cur != sc.link {
			t.Errorf("%s: the sub-navigation marks %v as current", sc.path, cur)
		}
		s.oneH1(sc.path, "Knowledge")
		s.axeSchemes(sc.path)
	}

	// A collection: made with guide.txt, opened, returns.txt added, guide.txt removed, deleted.
	s.click(knowledgeCollections)
	s.fill(collectionName, "Policies")
	s.clickIn(collectionFile, "guide.txt", "")
	s.click(collectionCreate)
	s.clickIn(collectionRow, "Policies", collectionLink)
	s.waitText(collectionMember, "guide.txt", patience)
	s.waitText(collectionSummary, "1 files", patience)
	if p, _ := s.eval(`location.pathname`).(string); !regexp.MustCompile(`^/studio/knowledge/collections/[0-9a-f-]{36}$`).MatchString(p) {
		t.Errorf("the opened collection is at %q", p)
	}
	s.clickIn(collectionAddFile, "returns.txt", "")
	s.click(collectionAdd)
	s.waitText(collectionMember, "returns.txt", patience)
	s.count("the collection's files after the add", tid(collectionMember), 2)
	s.listsLoaded()
	s.axeSchemes("an opened collection")
	s.clickIn(collectionMember, "guide.txt", collectionRemove)
	s.waitText(collectionSummary, "1 files", patience)
	s.count("the collection's files after the removal", tid(collectionMember), 1)
	if got := s.texts(collectionMember); len(got) != 1 || !strings.Contains(got[0], "returns.txt") {
		t.Errorf("after removing guide.txt the collection holds %q", got)
	}
	collPath, _ := s.eval(`location.pathname`).(string)
	s.steady("an opened collection", collPath, tid(collectionMember))
	s.click(collectionDelete)
	s.click(collectionDeleteConfirm)
	s.waitText(empty, "No collections yet", patience)
	if p := s.eval(`location.pathname`); p != "/studio/knowledge/collections" {
		t.Errorf("after the delete the page is %v, want the collections", p)
	}
	if files := s.call("GET", "/api/v1/files/", nil); !strings.Contains(string(files), "guide.txt") || !strings.Contains(string(files), "returns.txt") {
		t.Errorf("the collection's files went with it: %s", files)
	}

	// A knowledge base of guide.txt in chunks of about a line, and the file's chunks.
	s.click(knowledgeBases)
	s.click(kbSourceFiles)
	s.clickIn(kbFile, "guide.txt", "")
	s.fill(kbName, "Guide")
	s.fill(kbChunkSize, "100")
	s.fill(kbChunkOverlap, "0")
	s.fill(kbSplitBy, "char")
	s.click(kbCreate)
	s.waitStatus("completed", 3*time.Minute)
	row := s.waitText(kbSource, "ingested", patience)
	n := 0
	if m := regexp.MustCompile(`(\d+)\s*Chunks`).FindStringSubmatch(row); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	if !strings.Contains(row, "guide.txt") || n <= 20 {
		t.Fatalf("the knowledge base's file row reads %q; want guide.txt ingested in more than 20 chunks", row)
	}
	kbPath, _ := s.eval(`location.pathname`).(string)
	s.axeSchemes("an opened knowledge base")
	s.steady("an opened knowledge base", kbPath, tid(kbSource))

	s.clickIn(kbSource, "guide.txt", kbChunksLink)
	s.waitText(chunksSummary, fmt.Sprintf("%d chunks", n), patience)
	s.count("the first page of chunks", tid(chunkRow), 20)
	var steps []int
	read := func(from int) {
		idx, _ := s.eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q), r => Number(r.dataset.index))`, tid(chunkRow))).([]any)
		for i, v := range idx {
			if v != float64(from+i) {
				t.Errorf("chunk row %d of the page from %d is chunk %v", i, from, v)
			}
		}
		for _, txt := range s.texts(chunkText) {
			for _, m := range stepNumber.FindAllStringSubmatch(txt, -1) {
				k, _ := strconv.Atoi(m[1])
				steps = append(steps, k)
			}
		}
	}
	read(0)
	s.axeSchemes("a file's chunks")
	chunksPath, _ := s.eval(`location.pathname + location.search`).(string)
	s.steady("a file's chunks", chunksPath, tid(chunkRow))
	s.listsLoaded()
	s.count("the first page of chunks again", tid(chunkRow), 20)
	steps = nil
	read(0)
	s.do("next page", patience, chromedp.Click(`[aria-label="Pages"] button:last-of-type`, chromedp.NodeVisible))
	s.count("the second page of chunks", tid(chunkRow), n-20)
	s.listsLoaded()
	read(20)
	for i, k := range steps {
		if k != i+1 {
			t.Fatalf("the chunks read in order hold steps %v; want 1 to 30 in order", steps)
		}
	}
	if len(steps) != 30 {
		t.Errorf("the chunks hold %d steps of 30: %v", len(steps), steps)
	}
	s.click(chunksBack)
	s.waitText(kbSource, "guide.txt", patience)
	s.report.Clean(t)
}

// axeSchemes runs axe-core on the screen as it is, under the dark scheme and the light one.
func (s *studio) axeSchemes(what string) {
	s.t.Helper()
	for _, dark := range []bool{true, false} {
		s.scheme(dark)
		s.axe(fmt.Sprintf("%s (dark %t)", what, dark))
	}
}
