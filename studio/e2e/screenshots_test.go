package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentorch/agentorch/infra/localstack"
)

// The trace's row opener and what it opens (studio/README.md).
const traceOpen, traceDetail = "trace-open", "trace-detail"

// TestScreenshots takes the pictures of the docs (docs/img/studio-*.png, which README.md and
// docs/studio.md show) of the stage, a company with something on every screen: the sign-in, the
// agents, an agent's editor (JSON, YAML, its versions compared), the playground with a tool's row
// and a cited answer (and the passage opened), the trace, knowledge and a search, the settings'
// keys and MCP servers, and the dark theme. With STUDIO_SCREENSHOTS=1 they are written to
// docs/img; otherwise to a temporary directory, so that every run checks that each state is
// reached and its picture is not blank. axe-core runs on each state pictured.
func TestScreenshots(t *testing.T) {
	s := newStudio(t)
	s.shot("signin")
	st := s.stage(startMCP(t))
	s.clickIn(traceEvent, "calculator", traceOpen)
	s.visible(traceDetail)
	s.shot("trace")

	s.navigate(st.Chat)
	s.waitText(citation, "1", patience)
	s.waitText(toolCall, "knowledge_base_search", patience)
	s.shot("playground")
	s.click(citation)
	s.waitText(citationPassage, "thirty days", patience)
	s.shot("citation")

	s.click(navAgents)
	s.waitText(agentRow, "Support", patience)
	s.shot("home")
	s.navigate(st.Editor)
	s.visible(agentSave)
	s.listsLoaded()
	s.shot("agent-editor")
	s.waitCount(versionRow, 2, patience)
	var versions []struct {
		VersionNumber string `json:"version_number"`
	}
	if err := json.Unmarshal(s.call("GET", "/api/v1/agent/"+st.AgentID+"/versions/", nil), &versions); err != nil || len(versions) != 2 {
		t.Fatalf("versions %+v: %v", versions, err)
	}
	s.choose(versionLeft, versions[1].VersionNumber, false)
	s.choose(versionRight, versions[0].VersionNumber, false)
	s.visible(diffRow)
	s.shot("versions")
	s.click(formatYAML)
	s.waitFormat("yaml")
	s.shot("agent-yaml")

	s.navigate("/studio/knowledge/bases/" + st.KB)
	s.waitStatus("completed", patience)
	s.listsLoaded()
	s.shot("knowledge")
	s.fill(searchInput, "How long may I send a purchase back?")
	s.do("press Enter in the search box", patience, chromedp.SendKeys(chromedp.CSS(tid(searchInput)), "\r"))
	s.waitText(searchResult, "thirty days", patience)
	s.shot("search")

	s.click(navSettings)
	s.waitText(keyRow, "studio test", patience)
	s.listsLoaded()
	s.shot("keys")
	s.clickIn(mcpRow, "local", mcpTools)
	s.waitText(mcpTool, "echo", patience)
	s.shot("mcp")

	s.scheme(true)
	s.navigate(st.Editor)
	s.visible(agentSave)
	s.listsLoaded()
	s.shot("dark")
	s.report.Clean(t)
}

// navigate opens the path (under the server) in the tab, as a typed address would.
func (s *studio) navigate(path string) {
	s.t.Helper()
	s.do("open "+path, patience, chromedp.Navigate(s.base+path))
}

// shot takes a screenshot of the viewport (1280×800) as docs/img/studio-<name>.png: into docs/img
// when STUDIO_SCREENSHOTS=1 (the docs' pictures, taken by the tests rather than by hand, and only
// on request so that a plain run leaves the tree clean), into the test's temporary directory
// otherwise. Either way the picture must not be blank, and axe-core must find the state clean.
func (s *studio) shot(name string) {
	s.t.Helper()
	s.axe("the state pictured as " + name)
	ctx, cancel := context.WithTimeout(s.tab, patience)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		s.fail("screenshot %s: %v", name, err)
	}
	if why := blank(b); why != "" {
		s.fail("screenshot %s is blank: %s", name, why)
	}
	dir := s.t.TempDir()
	if os.Getenv("STUDIO_SCREENSHOTS") == "1" {
		root, err := localstack.RepoRoot()
		if err != nil {
			s.t.Fatal(err)
		}
		dir = filepath.Join(root, "docs", "img")
	}
	path := filepath.Join(dir, "studio-"+name+".png")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("screenshot %s (%d KB)", path, len(b)/1024)
}

// blank says why a PNG is not a picture of a screen ("" when it is): it does not decode, is not
// the browser's viewport size, or is (almost) one colour, as a page that did not render is.
func blank(b []byte) string {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return "not a PNG: " + err.Error()
	}
	r := img.Bounds()
	if r.Dx() < 1000 || r.Dy() < 600 {
		return "its size is " + r.Size().String()
	}
	counts := map[uint32]int{}
	most := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c, g, bl, _ := img.At(x, y).RGBA()
			k := c>>8<<16 | g>>8<<8 | bl>>8
			counts[k]++
			most = max(most, counts[k])
		}
	}
	if n := r.Dx() * r.Dy(); most > n*98/100 || len(counts) < 32 {
		return fmt.Sprintf("one colour covers %d%% of it, and it has %d colours", most*100/n, len(counts))
	}
	return ""
}

// TestBlank: blank tells a rendered screen from a page that did not render (one colour, a few
// specks) and from what is not a picture of the viewport at all.
func TestBlank(t *testing.T) {
	encode := func(w, h int, paint func(x, y int) color.Color) []byte {
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				img.Set(x, y, paint(x, y))
			}
		}
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	white := color.RGBA{255, 255, 255, 255}
	tests := []struct {
		name  string
		png   []byte
		blank bool
	}{
		{"white", encode(1280, 800, func(int, int) color.Color { return white }), true},
		{"a few specks", encode(1280, 800, func(x, y int) color.Color {
			if x < 20 && y < 20 {
				return color.RGBA{uint8(x * 10), uint8(y * 10), 0, 255}
			}
			return white
		}), true},
		{"too small", encode(200, 100, func(x, y int) color.Color { return color.RGBA{uint8(x), uint8(y), 0, 255} }), true},
		{"not a PNG", []byte("<html>"), true},
		{"a screen", encode(1280, 800, func(x, y int) color.Color {
			if y < 60 || (x/8+y/16)%5 == 0 {
				return color.RGBA{uint8(x % 200), uint8(y % 180), 90, 255}
			}
			return white
		}), false},
	}
	for _, tt := range tests {
		if got := blank(tt.png); (got != "") != tt.blank {
			t.Errorf("%s: blank = %q, want blank %v", tt.name, got, tt.blank)
		}
	}
}
