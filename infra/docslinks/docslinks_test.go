// Package docslinks checks that the repository's Markdown documentation points only at what the
// repository holds: every relative link resolves to a file or directory inside it, and every file a
// documented curl command uploads (`-F file=@path`, `--data-binary @path`) is shipped, so that the
// commands work as written from the repository root.
package docslinks

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// [text](target) and ![alt](target); the target ends at a space or the closing parenthesis.
	linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// curl's file arguments: -F name=@path, --data-binary @path, -d @path, -T path is not used.
	uploadRE = regexp.MustCompile(`(?:-F\s+\w+=@|--data-binary\s+@|--data\s+@|-d\s+@)([^\s'";)]+)`)
	schemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// problems lists what the Markdown file rel (relative to root) points at that root does not hold.
func problems(root, rel string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	text := string(b)
	var out []string
	inside := func(p string) bool {
		r, err := filepath.Rel(root, p)
		return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
	}
	for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
		target := m[1]
		if schemeRE.MatchString(target) || strings.HasPrefix(target, "#") {
			continue
		}
		target, _, _ = strings.Cut(target, "#")
		p := filepath.Join(root, filepath.Dir(rel), filepath.FromSlash(target))
		if !inside(p) {
			out = append(out, fmt.Sprintf("%s: link %s points outside the repository", rel, m[1]))
			continue
		}
		if _, err := os.Stat(p); err != nil {
			out = append(out, fmt.Sprintf("%s: link %s: no such file", rel, m[1]))
		}
	}
	for _, m := range uploadRE.FindAllStringSubmatch(text, -1) {
		if strings.HasPrefix(m[1], "$") || strings.HasPrefix(m[1], "-") {
			continue // a variable or stdin: the command names no file of its own
		}
		p := filepath.Join(root, filepath.FromSlash(m[1])) // commands run from the repository root
		if !inside(p) {
			out = append(out, fmt.Sprintf("%s: command uploads %s, outside the repository", rel, m[1]))
			continue
		}
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			out = append(out, fmt.Sprintf("%s: command uploads %s, which the repository does not ship", rel, m[1]))
		}
	}
	return out, nil
}

// markdown lists the documentation: README.md files anywhere but in dependencies and caches, and
// everything under docs/.
func markdown(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".cache", ".git", ".aws-sam", "testdata", "dist":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == "README.md" || (strings.HasPrefix(rel, "docs"+string(filepath.Separator)) && strings.HasSuffix(rel, ".md")) {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestDocsPointInsideTheRepository(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files := markdown(t, root)
	if len(files) < 10 {
		t.Fatalf("found %d Markdown files under %s, want the README and docs/", len(files), root)
	}
	for _, f := range files {
		ps, err := problems(root, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			t.Error(p)
		}
	}
}

// The check itself finds what it is for: a link out of the repository, a missing file, an upload
// of a file that is not shipped; and passes what resolves.
func TestProblemsFindsBrokenReferences(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "docs", "examples"), 0o755))
	must(os.WriteFile(filepath.Join(root, "docs", "examples", "a.txt"), []byte("a"), 0o644))
	must(os.WriteFile(filepath.Join(root, "docs", "other.md"), []byte("# Other\n"), 0o644))
	doc := "See [the contract](../../shared/SPEC.md), [other](other.md#x), [gone](gone.md), " +
		"[web](https://example.com), [here](#top).\n\n```sh\n" +
		"curl -F file=@returns.txt $API/files/\ncurl -F file=@docs/examples/a.txt $API/files/\n" +
		"curl --data-binary @handbook.pdf \"$URL\"\ncurl --data-binary @\"$F\" \"$URL\"\n```\n"
	must(os.WriteFile(filepath.Join(root, "docs", "doc.md"), []byte(doc), 0o644))
	got, err := problems(root, filepath.Join("docs", "doc.md"))
	must(err)
	want := []string{
		"docs/doc.md: link ../../shared/SPEC.md points outside the repository",
		"docs/doc.md: link gone.md: no such file",
		"docs/doc.md: command uploads returns.txt, which the repository does not ship",
		"docs/doc.md: command uploads handbook.pdf, which the repository does not ship",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
