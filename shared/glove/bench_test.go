package glove

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// benchChunks cuts the Persuasion text the project ships into chunks of 90 words, about the 120
// tokens of the ingestion's default chunks.
func benchChunks(b *testing.B) []string {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(b), "shared", "chunk", "testdata", "persuasion.txt"))
	if err != nil {
		b.Fatal(err)
	}
	words := strings.Fields(string(raw))
	var chunks []string
	for i := 0; i+90 <= len(words) && len(chunks) < 1000; i += 90 {
		chunks = append(chunks, strings.Join(words[i:i+90], " "))
	}
	return chunks
}

// BenchmarkEmbed is one 90-word chunk embedded (op = one chunk), with the default options.
func BenchmarkEmbed(b *testing.B) {
	m, err := Load(realDir(b, Words))
	if err != nil {
		b.Fatal(err)
	}
	chunks := benchChunks(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Embed(chunks[i%len(chunks) : i%len(chunks)+1])
	}
}

// BenchmarkLoad is one Load of the reduced file (op = one load); it reports the file's size and
// the heap the loaded model holds (resident, measured after a GC with the model alive).
func BenchmarkLoad(b *testing.B) {
	dir := realDir(b, Words)
	st, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(m)
	b.ReportMetric(float64(st.Size())/1e6, "file-MB")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "heap-MB")
}
