package app_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/infra/lambdarun"
	"github.com/agentorch/agentorch/infra/localstack"
)

// BenchmarkPackageInit measures each function's package initialisation as the Go runtime reports
// it (GODEBUG=inittrace=1): the clock (the median of the runs, init-ms) and the allocations of
// every package's init summed, for functions/<dir> built with the Lambda recipe for the host. The
// bootstrap exits right after init (no Lambda runtime API is set), so no stack needs to run.
// Meta's goal is 5 ms (issue 24); BenchmarkColdStart (infra/lambdarun) measures exec to /next.
func BenchmarkPackageInit(b *testing.B) {
	root, err := localstack.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	for _, dir := range []string{"meta", "auth", "agents", "runtime"} {
		bin := filepath.Join(b.TempDir(), dir, "bootstrap")
		if _, err := lambdarun.Build(b.Context(), root, dir, bin, lambdarun.AWSTags); err != nil {
			b.Fatal(err)
		}
		b.Run(dir, func(b *testing.B) {
			var clocks []float64
			var allocs float64
			for range b.N {
				cmd := exec.CommandContext(b.Context(), bin)
				cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "AWS_LAMBDA_RUNTIME_API=")
				out, _ := cmd.CombinedOutput() // it exits 1 without the runtime API, after init
				ms, n, pkgs := sumInitTrace(string(out))
				if pkgs == 0 {
					b.Fatalf("no inittrace lines in the output of %s:\n%s", dir, out)
				}
				clocks, allocs = append(clocks, ms), allocs+n
			}
			slices.Sort(clocks)
			b.ReportMetric(clocks[len(clocks)/2], "init-ms")
			b.ReportMetric(allocs/float64(b.N), "init-allocs")
		})
	}
}

// sumInitTrace sums inittrace's lines ("init pkg @0.5 ms, 0.02 ms clock, 48 bytes, 2 allocs").
func sumInitTrace(out string) (ms, allocs float64, pkgs int) {
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || f[6] != "clock," || f[10] != "allocs" {
			continue
		}
		c, err1 := strconv.ParseFloat(f[4], 64)
		n, err2 := strconv.ParseFloat(f[9], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		ms, allocs, pkgs = ms+c, allocs+n, pkgs+1
	}
	return ms, allocs, pkgs
}
