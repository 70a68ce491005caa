// Package corpus gives benchmarks real text of the machine they run on, text the repository
// does not store: man pages rendered by man(1) and the licences of /usr/share/common-licenses.
package corpus

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ManPages renders 15 man pages of this machine as text (man -l, col -bx, 80 columns) and reads
// 5 licences: about 450 KB of text whose short indented lines make many tokens a word for the
// local model. It skips tb on a machine without them.
func ManPages(tb testing.TB) []string {
	tb.Helper()
	var out []string
	for _, p := range []string{"ls", "cp", "grep", "sed", "tar", "xargs", "sort", "chmod", "date", "make", "gzip", "diff", "patch", "ps", "ssh"} {
		src := filepath.Join("/usr/share/man/man1", p+".1.gz")
		if _, err := os.Stat(src); err != nil {
			tb.Skipf("no man page %s on this machine", src)
		}
		cmd := exec.Command("sh", "-c", `man -l "$1" | col -bx`, "sh", src)
		cmd.Env = append(os.Environ(), "MANWIDTH=80")
		text, err := cmd.Output()
		if err != nil || len(text) == 0 {
			tb.Skipf("man -l %s: %v", src, err)
		}
		out = append(out, string(text))
	}
	for _, l := range []string{"GPL-3", "Apache-2.0", "MPL-2.0", "LGPL-2.1", "GFDL-1.3"} {
		text, err := os.ReadFile(filepath.Join("/usr/share/common-licenses", l))
		if err != nil {
			tb.Skipf("licence %s: %v", l, err)
		}
		out = append(out, string(text))
	}
	return out
}
