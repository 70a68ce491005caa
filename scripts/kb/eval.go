package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
)

// evalRow is one set and strategy of the retrieval evaluation.
type evalRow struct {
	Set, Strategy string
	Metrics       map[string]float64 // by unit: recall@5, MRR@10, words@5, questions, answerable, chunks, ms/search
}

// evalColumns are the metrics the table shows, in order.
var evalColumns = []string{"recall@5", "MRR@10", "words@5", "questions", "answerable", "chunks", "ms/search"}

// eval runs `kb eval`: BenchmarkRetrievalQuality (shared/knowledge/eval_bench_test.go, which owns
// the labelled sets, the in-process OpenSearch stand-in and the ingestion) once, through `go
// test`, and prints its figures as one table, a row per set and strategy.
func eval(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("kb eval", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	set := fs.String("set", "", "run only this set (persuasion, mpl, apt-get; default: all)")
	topK := fs.Int("top-k", 0, "also measure recall and returned words at this top_k (to compare at equal returned text)")
	headers := fs.Bool("contextual-headers", false, "ingest with chunking_strategy.contextual_headers (EVAL_CONTEXTUAL_HEADERS=1)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fmt.Errorf("kb eval takes no FILE\n%s", usage)
	}
	if *topK < 0 {
		return errors.New("--top-k: want a positive integer")
	}
	root, err := localstack.RepoRoot()
	if err != nil {
		return err
	}
	bench := "^BenchmarkRetrievalQuality$"
	if *set != "" {
		bench += "/^" + regexp.QuoteMeta(*set) + "$"
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "./shared/knowledge", "-run", "^$", "-bench", bench, "-benchtime", "1x", "-count", "1")
	cmd.Dir = root
	cmd.Env = os.Environ()
	if *headers {
		cmd.Env = append(cmd.Env, "EVAL_CONTEXTUAL_HEADERS=1")
	}
	cols := evalColumns
	if *topK > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("EVAL_TOP_K=%d", *topK))
		cols = append([]string{fmt.Sprintf("recall@%d", *topK), fmt.Sprintf("words@%d", *topK)}, cols...)
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		_, _ = os.Stderr.Write(out)
		return fmt.Errorf("go test -bench RetrievalQuality: %w", err)
	}
	rows := parseEval(string(out))
	if len(rows) == 0 {
		_, _ = os.Stderr.Write(out)
		return fmt.Errorf("the benchmark reported no figures (skipped? see above)")
	}
	return printEval(stdout, rows, cols)
}

// benchLine is a result line of a sub-benchmark set/strategy: name, GOMAXPROCS suffix, N, then
// value-unit pairs.
var benchLine = regexp.MustCompile(`^BenchmarkRetrievalQuality/([^/\s]+)/([^\s]+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parseEval reads the benchmark's output; other lines are ignored.
func parseEval(out string) []evalRow {
	var rows []evalRow
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		row := evalRow{Set: m[1], Strategy: m[2], Metrics: map[string]float64{}}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				row.Metrics[f[i+1]] = v
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// printEval writes the rows as an aligned table (the tabwriter buffers: a write error is
// Flush's).
func printEval(w io.Writer, rows []evalRow, columns []string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	_, _ = fmt.Fprint(tw, "set\tstrategy\t"+strings.Join(columns, "\t")+"\t\n")
	for _, r := range rows {
		_, _ = fmt.Fprintf(tw, "%s\t%s\t", r.Set, r.Strategy)
		for _, c := range columns {
			v, ok := r.Metrics[c]
			switch {
			case !ok:
				_, _ = fmt.Fprint(tw, "-\t")
			case c == "questions" || c == "chunks" || strings.HasPrefix(c, "words@"):
				_, _ = fmt.Fprintf(tw, "%.0f\t", v)
			default:
				_, _ = fmt.Fprintf(tw, "%.3f\t", v)
			}
		}
		_, _ = fmt.Fprintln(tw)
	}
	return tw.Flush()
}
