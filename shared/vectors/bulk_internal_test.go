package vectors

import (
	"bytes"
	"strings"
	"testing"
)

// 30 chunks of 400 KB (12 MB) make three _bulk bodies of at most 5 MB, in order, none lost.
func TestBulkBodyBytes(t *testing.T) {
	chunks := make([]Chunk, 30)
	for i := range chunks {
		chunks[i] = Chunk{KBID: "kb", Company: "c", FileID: "f", ChunkIndex: i, Text: strings.Repeat("lorem ipsum ", 400<<10/12), Vector: []float32{1, 0}}
	}
	var sizes []int
	seen := 0
	for start := 0; start < len(chunks); {
		body, n, err := bulkBody("ix", chunks[start:])
		if err != nil {
			t.Fatal(err)
		}
		if n < 1 || bytes.Count(body, []byte("\n")) != 2*n {
			t.Fatalf("body of %d chunks has %d lines", n, bytes.Count(body, []byte("\n")))
		}
		if !bytes.Contains(body, []byte(`"_id":"`+ChunkID("kb", "f", start)+`"`)) {
			t.Errorf("batch at %d does not start with chunk %d", start, start)
		}
		sizes = append(sizes, len(body))
		seen += n
		start += n
	}
	if len(sizes) != 3 || seen != 30 {
		t.Errorf("batches %v covering %d chunks, want 3 covering 30", sizes, seen)
	}
	for _, n := range sizes {
		if n > maxBulkBytes {
			t.Errorf("body of %d bytes passes %d", n, maxBulkBytes)
		}
	}

	// One chunk larger than the limit still goes, alone.
	huge := []Chunk{{KBID: "kb", Company: "c", FileID: "f", Text: strings.Repeat("x", maxBulkBytes), Vector: []float32{1}}, chunks[0]}
	if _, n, err := bulkBody("ix", huge); err != nil || n != 1 {
		t.Errorf("oversized chunk: n %d, %v", n, err)
	}
}
