// Command kb runs the knowledge-base pipeline's steps on one file, to see what ingestion would
// make of it:
//
//	go run ./scripts/kb extract FILE
//	go run ./scripts/kb chunk FILE [--chunk-size N] [--chunk-overlap N] [--split-by char|word|token] [--separators JSON]
//	go run ./scripts/kb embed FILE [--provider local|bedrock|openai] [--model M] [--dimensions N]
//	go run ./scripts/kb eval [--set persuasion|mpl|apt-get] [--top-k N] [--contextual-headers]
//	go run ./scripts/kb bench-ingest [FILE...] [--rounds N] [--pid N]
//
// extract prints the text shared/extract finds in FILE. chunk splits that text with shared/chunk
// and prints one JSON object a line, {"index", "text", "length"} (length in the --split-by unit);
// its defaults are Atthene's (recursive, 500 words, 50 overlap, separators ["\n\n","\n",". "," "]).
// embed reads one text a line (empty lines skipped) and prints one JSON object a line,
// {"index", "text", "tokens", "embedding"}, embedded as a knowledge base with that
// embedding_config would embed its chunks; tokens over the model's limit are reported on
// standard error, as ingestion would split such a text. The local provider's files are fetched
// into the repository's .cache/models (or LOCALEMBED_DIR); bedrock uses the AWS configuration
// of the environment; openai reads OPENAI_BASE_URL and OPENAI_API_KEY.
// eval runs the retrieval evaluation (shared/knowledge/testdata/eval/README.md: labelled sets
// over a novel, a licence and a manual, the local embedder, the OpenSearch stand-in) and prints
// recall@5 and MRR@10 per set and strategy.
// bench-ingest times ingestion through a running make dev (same PORT and *_PORT variables) in
// chunks/s and the dev process's CPU time, against the bare local embedder on the chunks it
// indexed (benchingest.go; default files: a PDF, HTML, Markdown, plain text and a DOCX).
// Flags may come before or after FILE. FILE "-" is standard input.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentorch/agentorch/shared/chunk"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/extract"
)

const usage = `usage:
  kb extract FILE
  kb chunk FILE [--chunk-size N] [--chunk-overlap N] [--split-by char|word|token] [--separators JSON]
  kb embed FILE [--provider local|bedrock|openai] [--model M] [--dimensions N]
  kb eval [--set persuasion|mpl|apt-get] [--top-k N] [--contextual-headers]
  kb bench-ingest [FILE...] [--rounds N] [--model M] [--pid N] [--api URL] [--key-file F] [--opensearch URL]
FILE "-" is standard input`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kb:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "embed":
		return embed(ctx, args[1:], stdin, stdout)
	case "eval":
		return eval(ctx, args[1:], stdout)
	case "bench-ingest":
		return benchIngest(ctx, args[1:], stdout)
	}
	fs := flag.NewFlagSet("kb "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, and printed once by main
	// check runs after the flags are parsed and before the file is read; cmd gets the file's text.
	check := func() error { return nil }
	var cmd func(ctx context.Context, text string) error
	switch args[0] {
	case "extract":
		cmd = func(_ context.Context, text string) error {
			_, err := io.WriteString(stdout, text+"\n")
			return err
		}
	case "chunk":
		def := chunk.Default()
		size := fs.Int("chunk-size", def.ChunkSize, "chunk size in --split-by units")
		overlap := fs.Int("chunk-overlap", def.ChunkOverlap, "overlap in --split-by units (less than --chunk-size)")
		splitBy := fs.String("split-by", def.SplitBy, "char (UTF-16 code units, as LangChain.js), word, or token (estimated here as a third of the UTF-8 bytes; ingestion counts the embedding model's own tokens)")
		seps := separators(def.RecursiveSeparators)
		fs.Var(&seps, "separators", `separators as a JSON array, tried in order (default ["\n\n","\n",". "," "])`)
		var s *chunk.Splitter
		check = func() (err error) {
			s, err = chunk.New(domain.Chunking{Strategy: chunk.StrategyRecursive, ChunkSize: *size,
				ChunkOverlap: *overlap, SplitBy: *splitBy, RecursiveSeparators: seps})
			return flagError(err)
		}
		cmd = func(_ context.Context, text string) error {
			return printChunks(stdout, s.Chunks(text))
		}
	default:
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
	files, err := parse(fs, args[1:])
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("want one FILE, got %d\n%s", len(files), usage)
	}
	if err := check(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	text, err := extractText(ctx, files[0], stdin)
	if err != nil {
		return err
	}
	return cmd(ctx, text)
}

// parse reads flags before, between and after the positional arguments, which it returns.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errors.New(usage)
			}
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

// extractText reads the file ("-": stdin) and extracts its text as ingestion does.
func extractText(ctx context.Context, name string, stdin io.Reader) (string, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, extract.DefaultMaxBytes+1))
		name = "stdin.txt"
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return "", err
	}
	res, err := extract.Text(ctx, name, data, extract.Limits{})
	if err != nil {
		return "", fmt.Errorf("extract %s: %w", name, err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(os.Stderr, "kb: warning:", w)
	}
	return res.Text, nil
}

// printChunks writes one JSON object a line.
func printChunks(w io.Writer, chunks []chunk.Chunk) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, c := range chunks {
		line := struct {
			Index  int    `json:"index"`
			Text   string `json:"text"`
			Length int    `json:"length"`
		}{c.Index, c.Text, c.Length}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return nil
}

// separators is the --separators flag: a JSON array of strings.
type separators []string

func (s *separators) String() string {
	if s == nil {
		return "[]"
	}
	b, _ := json.Marshal([]string(*s))
	return string(b)
}

func (s *separators) Set(v string) error {
	var list []string
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return fmt.Errorf(`want a JSON array of strings such as '["\n\n", "\n", " "]': %w`, err)
	}
	*s = list
	return nil
}

// flagError names the flags behind a chunking_strategy's field errors.
func flagError(err error) error {
	if err == nil {
		return nil
	}
	var de *domain.Error
	if !errors.As(err, &de) || len(de.Fields) == 0 {
		return err
	}
	flags := map[string]string{"chunk_size": "--chunk-size", "chunk_overlap": "--chunk-overlap",
		"split_by": "--split-by", "recursive_separators": "--separators",
		"embedding_config.provider": "--provider", "embedding_config.model": "--model", "embedding_config.dimensions": "--dimensions"}
	var msgs []string
	for _, f := range de.Fields {
		name, ok := flags[f.Field]
		if !ok {
			name = f.Field
		}
		msgs = append(msgs, name+": "+f.Message)
	}
	return &domain.Error{Kind: domain.KindInvalid, Message: strings.Join(msgs, "; "), Fields: de.Fields}
}
