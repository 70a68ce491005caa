package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentorch/agentorch/shared/extract"
)

// TestDocxOfExtracts: the DOCX bench-ingest writes from a text file is one ingestion reads back
// as that text, a paragraph a line, markup characters included.
func TestDocxOfExtracts(t *testing.T) {
	text := "APT-GET(8)\n\n   apt-get <options> install pkg & \"more\"\n\tindented line\n"
	data, err := docxOf(text)
	if err != nil {
		t.Fatal(err)
	}
	res, err := extract.Text(context.Background(), "apt-get.docx", data, extract.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"APT-GET(8)", `apt-get <options> install pkg & "more"`, "indented line"} {
		if !strings.Contains(res.Text, line) {
			t.Errorf("extracted text %q lacks %q", res.Text, line)
		}
	}
}

// TestProcessCPU: the CPU time read from /proc/PID/stat grows as the process works, and agrees
// with getrusage's within a few clock ticks.
func TestProcessCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	start, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 1.0
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		for i := 0; i < 1e6; i++ {
			x = x*1.0000001 + 1e-9
		}
		now, err := processCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if now-start >= 50*time.Millisecond {
			self := selfCPU()
			if d := self - now; d < -30*time.Millisecond || d > time.Second {
				t.Errorf("/proc says %v, getrusage %v", now, self)
			}
			return
		}
	}
	t.Fatalf("the CPU time did not grow (%v; x=%v)", start, x)
}
