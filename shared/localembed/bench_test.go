package localembed

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchTexts are chunk-length texts (about 100 words, most of them at or near the 128-token
// limit) cut from the prose of testdata/sentences.json, the kind of text a knowledge base embeds.
func benchTexts(tb testing.TB, n int) []string {
	tb.Helper()
	var words []string
	for _, s := range loadSentences(tb) {
		if len(strings.Fields(s)) >= 8 && !strings.ContainsAny(s, "#{}") {
			words = append(words, strings.Fields(s)...)
		}
	}
	const perText = 100
	texts := make([]string, n)
	for i := range texts {
		start := (i * 37) % len(words)
		var b strings.Builder
		for k := 0; k < perText; k++ {
			if k > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[(start+k)%len(words)])
		}
		texts[i] = b.String()
	}
	return texts
}

// BenchmarkEmbed embeds batches of 32 chunk-length texts, with each set of kernels; compare its
// sentences/s with BenchmarkReferenceEmbed, which runs the TF.js reference on the same texts.
// cpu-ms/sentence is processor time, which stays comparable when the machine is busy.
func BenchmarkEmbed(b *testing.B) {
	texts := benchTexts(b, 32)
	for _, k := range kernelChoices(b) {
		b.Run(k.name, func(b *testing.B) {
			m := k.model
			tokens := 0
			for _, t := range texts {
				tokens += min(len(m.Tokenize(t)), m.MaxTokens())
			}
			ctx := context.Background()
			cpu0 := cpuSeconds()
			for b.Loop() {
				if _, err := m.Embed(ctx, texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSeconds()-cpu0)*1000/float64(b.N*len(texts)), "cpu-ms/sentence")
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N*len(texts))/s, "sentences/s")
			b.ReportMetric(float64(b.N*tokens)/s, "tokens/s")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
			if rss := residentMB(); rss > 0 {
				b.ReportMetric(rss, "rss-MB")
			}
		})
	}
}

// cpuSeconds is the processor time this process has used (user and system), which, unlike the
// wall clock, does not depend on what else the machine runs.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// residentMB is the peak resident size of this process (the test binary, so it includes the
// testing framework), or 0 where /proc does not say.
func residentMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err == nil {
				return float64(kb) / 1024
			}
		}
	}
	return 0
}

// BenchmarkEmbedShort embeds batches of 32 short sentences (about ten tokens each).
func BenchmarkEmbedShort(b *testing.B) {
	m := testModel(b)
	texts := make([]string, 32)
	for i, t := range benchTexts(b, 32) {
		texts[i] = strings.Join(strings.Fields(t)[:8], " ")
	}
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "sentences/s")
}

// BenchmarkReferenceEmbed runs the TF.js reference (Node, WebAssembly backend, which uses one
// core) over the texts of BenchmarkEmbed, in batches of 32, and reports its rate and footprint.
func BenchmarkReferenceEmbed(b *testing.B) {
	texts := benchTexts(b, 32)
	var res struct {
		Backend            string  `json:"backend"`
		LoadMS             float64 `json:"load_ms"`
		SentencesPerSecond float64 `json:"sentences_per_second"`
		CPUMSPerSentence   float64 `json:"cpu_ms_per_sentence"`
		RSSMB              float64 `json:"rss_mb"`
	}
	for b.Loop() {
		runReference(b, map[string]any{"texts": texts, "bench": map[string]int{"batch": 32, "rounds": 2}}, &res)
	}
	b.ReportMetric(res.SentencesPerSecond, "sentences/s")
	b.ReportMetric(res.CPUMSPerSentence, "cpu-ms/sentence")
	b.ReportMetric(res.LoadMS, "load-ms")
	b.ReportMetric(res.RSSMB, "rss-MB")
	b.Logf("reference backend %s", res.Backend)
}

// BenchmarkLoad reads and prepares the model from the cache; heap-MB is the memory one loaded
// model keeps (Embed adds about 7 MB per worker while it runs, kept for reuse).
func BenchmarkLoad(b *testing.B) {
	dir := modelDir(b)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	var m *Model
	for b.Loop() {
		m = nil
		var err error
		if m, err = Load(dir); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc-before)/(1<<20), "heap-MB")
	runtime.KeepAlive(m)
}
