package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/embeddings"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/vectors"
)

// benchFiles are bench-ingest's documents when none are named: a PDF and an HTML page (the
// shared-mime-info specification), Markdown (this repository's knowledge-base reference), a
// licence as plain text, and a DOCX written from the apt-get manual (one paragraph a line).
var benchFiles = []string{
	"shared/extract/testdata/shared-mime-info/spec.pdf",
	"shared/extract/testdata/shared-mime-info/x34.html",
	"docs/embeddings-and-chunking.md",
	"shared/knowledge/testdata/eval/mpl/MPL-2.0.txt",
	"shared/knowledge/testdata/eval/apt-get/apt-get.8.txt:docx",
}

// benchIngest runs `kb bench-ingest`: it times ingestion through a running `make dev` (upload,
// a knowledge base with the local embedder, polled until completed) in chunks/s and in the dev
// process's CPU time, reads back the chunks it indexed, embeds exactly those texts with the bare
// local embedder in this process (batches of 64, as ingestion's) and prints both and their
// ratios: the bar is ingestion at ≥ 0.9 of the bare embedder. CPU time is the figure to
// trust on a busy machine; wall time moves with whatever else runs. The dev process's CPU time
// counts the API, the ingest worker, the S3 and OpenSearch stand-ins (all in it) and not
// DynamoDB Local or the SQS stand-in (processes of their own); the status polls, two a second,
// and the process's idle work add well under 1% to it. Wall time also counts the hops between
// jobs and a poll's wait, which weigh less the more chunks the files make.
func benchIngest(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("kb bench-ingest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	apiPort, err := localstack.DevAPIPort()
	if err != nil {
		return err
	}
	ports, err := localstack.DevPorts()
	if err != nil {
		return err
	}
	root, err := localstack.RepoRoot()
	if err != nil {
		return err
	}
	api := fs.String("api", fmt.Sprintf("http://%s:%d", localstack.Host, apiPort), "the dev API's base URL")
	keyFile := fs.String("key-file", localstack.DevKeyFile(root, apiPort), "file holding the API key")
	osURL := fs.String("opensearch", ports.Endpoints().OpenSearch, "the OpenSearch stand-in's URL, to read the chunks back")
	company := fs.String("company", "dev", "the API key's company")
	pid := fs.Int("pid", 0, "the dev process, for its CPU time (default: the .cache/bin/dev serving --api's port)")
	rounds := fs.Int("rounds", 1, "knowledge bases to ingest and time, one after another")
	model := fs.String("model", "", "the local model (default: the provider's default)")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *rounds < 1 {
		return errors.New("--rounds: want a positive integer")
	}
	if len(files) == 0 {
		for _, f := range benchFiles {
			files = append(files, filepath.Join(root, f))
		}
	}
	key, err := os.ReadFile(*keyFile)
	if err != nil {
		return fmt.Errorf("the dev API key (is make dev running?): %w", err)
	}
	if *pid == 0 {
		if *pid, err = devProcess(apiPort); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Minute)
	defer cancel()
	c := &devClient{base: strings.TrimRight(*api, "/") + "/api/v1", key: strings.TrimSpace(string(key))}
	cfg := domain.Embedding{Provider: embeddings.ProviderLocal, Model: *model}
	emb, err := localEmbedder(ctx, cfg)
	if err != nil {
		return err
	}
	if _, err := emb.Embed(ctx, []string{"warm up"}); err != nil {
		return err
	}
	var ids []string
	defer func() {
		for _, id := range ids {
			_ = c.do(context.WithoutCancel(ctx), http.MethodDelete, "/files/"+id+"/", nil, "", nil)
		}
	}()
	for _, f := range files {
		id, err := c.upload(ctx, f)
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	_, _ = fmt.Fprintf(tw, "round\tfiles\tchunks\tpipeline chunks/s\tpipeline cpu ms/chunk\tbare chunks/s\tbare cpu ms/chunk\tratio\tcpu-ratio\t\n")
	var all roundFigures
	for r := 1; r <= *rounds; r++ {
		m, err := benchRound(ctx, c, emb, cfg, *osURL, *company, *pid, ids)
		if err != nil {
			return err
		}
		m.print(tw, strconv.Itoa(r), len(ids))
		all.chunks += m.chunks
		all.pipeWall, all.pipeCPU = all.pipeWall+m.pipeWall, all.pipeCPU+m.pipeCPU
		all.bareWall, all.bareCPU = all.bareWall+m.bareWall, all.bareCPU+m.bareCPU
	}
	if *rounds > 1 {
		all.print(tw, "all", len(ids))
	}
	return tw.Flush()
}

// print writes the figures as a row of the table.
func (m roundFigures) print(w io.Writer, round string, files int) {
	_, _ = fmt.Fprintf(w, "%s\t%d\t%d\t%.1f\t%.2f\t%.1f\t%.2f\t%.3f\t%.3f\t\n", round, files, m.chunks,
		float64(m.chunks)/m.pipeWall.Seconds(), ms(m.pipeCPU)/float64(m.chunks),
		float64(m.chunks)/m.bareWall.Seconds(), ms(m.bareCPU)/float64(m.chunks),
		m.bareWall.Seconds()/m.pipeWall.Seconds(), m.bareCPU.Seconds()/m.pipeCPU.Seconds())
}

// roundFigures are one round's measurements.
type roundFigures struct {
	chunks                               int
	pipeWall, pipeCPU, bareWall, bareCPU time.Duration
}

// benchRound ingests the files into a new knowledge base, reads its chunks back, embeds them
// bare, and deletes the knowledge base.
func benchRound(ctx context.Context, c *devClient, emb domain.Embedder, cfg domain.Embedding, osURL, company string, pid int, ids []string) (roundFigures, error) {
	var m roundFigures
	ec := map[string]any{"provider": cfg.Provider}
	if cfg.Model != "" {
		ec["model"] = cfg.Model
	}
	body := map[string]any{"name": fmt.Sprintf("bench-ingest %s", time.Now().UTC().Format(time.RFC3339Nano)),
		"selected_datasources": ids, "embedding_config": ec}
	cpu0, err := processCPU(pid)
	if err != nil {
		return m, err
	}
	began := time.Now()
	var kb struct{ ID string }
	if err := c.do(ctx, http.MethodPost, "/knowledge-bases/", body, "", &kb); err != nil {
		return m, err
	}
	defer func() {
		_ = c.do(context.WithoutCancel(ctx), http.MethodDelete, "/knowledge-bases/"+kb.ID+"/", nil, "", nil)
	}()
	for {
		var st struct {
			KnowledgeBase struct {
				Status           string            `json:"status"`
				DatasourceErrors map[string]string `json:"datasource_errors"`
			} `json:"knowledge_base"`
		}
		if err := c.do(ctx, http.MethodGet, "/knowledge-bases/"+kb.ID+"/check_status/", nil, "", &st); err != nil {
			return m, err
		}
		if s := st.KnowledgeBase.Status; s == string(domain.KBCompleted) || s == string(domain.KBFailed) {
			if len(st.KnowledgeBase.DatasourceErrors) > 0 || s == string(domain.KBFailed) {
				return m, fmt.Errorf("knowledge base %s %s: %v", kb.ID, s, st.KnowledgeBase.DatasourceErrors)
			}
			break
		}
		select {
		case <-ctx.Done():
			return m, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	m.pipeWall = time.Since(began)
	cpu1, err := processCPU(pid)
	if err != nil {
		return m, err
	}
	m.pipeCPU = cpu1 - cpu0

	texts, err := indexedTexts(ctx, osURL, company, kb.ID, emb)
	if err != nil {
		return m, err
	}
	m.chunks = len(texts)
	if m.chunks == 0 {
		return m, fmt.Errorf("knowledge base %s indexed no chunks", kb.ID)
	}
	cpu0, began = selfCPU(), time.Now()
	for i := 0; i < len(texts); i += embedBatch {
		if _, err := emb.Embed(ctx, texts[i:min(i+embedBatch, len(texts))]); err != nil {
			return m, err
		}
	}
	m.bareWall, m.bareCPU = time.Since(began), selfCPU()-cpu0
	return m, nil
}

// indexedTexts reads back every chunk text the knowledge base indexed (one k-NN search over the
// knowledge base with a probe vector: at most vectors.MaxTopK chunks).
func indexedTexts(ctx context.Context, osURL, company, kbID string, emb domain.Embedder) ([]string, error) {
	client, err := vectors.NewClient(osURL, nil, nil)
	if err != nil {
		return nil, err
	}
	store, err := vectors.New(client, vectors.Options{})
	if err != nil {
		return nil, err
	}
	probe := make([]float32, emb.Dimensions())
	probe[0] = 1
	hits, err := store.Search(ctx, store.IndexName(emb.Name(), emb.Dimensions()), domain.VectorQuery{KBIDs: []string{kbID},
		Company: company, Vector: probe, TopK: vectors.MaxTopK})
	if err != nil {
		return nil, fmt.Errorf("read the chunks back from %s: %w", osURL, err)
	}
	if len(hits) == vectors.MaxTopK {
		return nil, fmt.Errorf("the knowledge base holds %d chunks or more: ingest fewer files", vectors.MaxTopK)
	}
	texts := make([]string, len(hits))
	for i, h := range hits {
		texts[i] = h.Text
	}
	return texts, nil
}

// localEmbedder is the local model of cfg as ingestion builds it (embedProviders: the model's
// files in .cache/models or LOCALEMBED_DIR).
func localEmbedder(ctx context.Context, cfg domain.Embedding) (domain.Embedder, error) {
	providers, err := embedProviders(ctx, cfg.Provider)
	if err != nil {
		return nil, err
	}
	return providers.Embedder(ctx, cfg)
}

// devClient calls the dev API with its key.
type devClient struct {
	base, key string
}

// do sends body (JSON, or the multipart form when contentType is set) and decodes a 2xx answer
// into out; any other status is an error quoting the answer.
func (c *devClient) do(ctx context.Context, method, path string, body any, contentType string, out any) error {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return err
		}
		r, contentType = bytes.NewReader(j), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("x-api-key", c.key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %.300s", method, path, resp.Status, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// upload sends one file (a "PATH:docx" is the text file at PATH as a DOCX) and returns its id.
func (c *devClient) upload(ctx context.Context, path string) (string, error) {
	name := filepath.Base(path)
	var data []byte
	var err error
	if p, ok := strings.CutSuffix(path, ":docx"); ok {
		name = strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)) + ".docx"
		var text []byte
		if text, err = os.ReadFile(p); err == nil {
			data, err = docxOf(string(text))
		}
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return "", err
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	w, err := mw.CreateFormFile("file", name)
	if err == nil {
		_, err = w.Write(data)
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		return "", err
	}
	var f struct{ ID string }
	if err := c.do(ctx, http.MethodPost, "/files/", form.Bytes(), mw.FormDataContentType(), &f); err != nil {
		return "", err
	}
	return f.ID, nil
}

// docxOf is a Word document holding text, a paragraph per line (the three parts Word needs).
func docxOf(text string) ([]byte, error) {
	var doc strings.Builder
	doc.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
		`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
	for line := range strings.Lines(text) {
		doc.WriteString(`<w:p><w:r><w:t xml:space="preserve">` + html.EscapeString(strings.TrimRight(line, "\r\n")) + `</w:t></w:r></w:p>`)
	}
	doc.WriteString(`<w:sectPr/></w:body></w:document>`)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, part := range [][2]string{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
			`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
			`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
		{"word/document.xml", doc.String()},
	} {
		w, err := zw.Create(part[0])
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(w, part[1]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// devProcess finds the .cache/bin/dev process (not a -test runner) serving apiPort: its PORT
// environment variable names the port, or, for the default port, it has none.
func devProcess(apiPort int) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("find the dev process (pass --pid): %w", err)
	}
	u, err := url.Parse(platform.LocalPublicBaseURL)
	if err != nil {
		return 0, err
	}
	def, _ := strconv.Atoi(u.Port())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if !strings.HasSuffix(argv[0], "/.cache/bin/dev") || strings.Contains(string(cmdline), "-test") {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		port := def
		for _, kv := range strings.Split(string(environ), "\x00") {
			if v, ok := strings.CutPrefix(kv, localstack.EnvAPIPort+"="); ok {
				port, _ = strconv.Atoi(v)
			}
		}
		if port == apiPort {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no .cache/bin/dev serving port %d (is make dev running? else pass --pid)", apiPort)
}

// processCPU is the CPU time (user and system) process pid has used, from /proc/PID/stat.
func processCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("CPU time of the dev process: %w", err)
	}
	// The fields after the command name, which is in parentheses and may hold spaces: utime and
	// stime are fields 14 and 15 of the line, the 12th and 13th after the name.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux architecture Go runs on.
const clockTicks = 100

// selfCPU is the CPU time (user and system) this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
