package extract

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

// maxPeakHeap is the most heap one extraction of an input of at most 4 MiB may add.
const maxPeakHeap = 128 << 20

// peakHeap runs fn and returns the highest heap in use above the level before it, sampled every
// 200µs (runtime/metrics reads without stopping the world), after a collection.
func peakHeap(fn func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := read()
	var (
		peak uint64
		wg   sync.WaitGroup
	)
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if v := read(); v > peak {
				peak = v
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	if v := read(); v > peak {
		peak = v
	}
	if peak < base {
		return 0
	}
	return peak - base
}

// repeatReader yields s n times without holding the whole.
func repeatReader(s string, n int) io.Reader {
	rs := make([]io.Reader, 0, 3)
	rs = append(rs, &repeated{s: s, n: n})
	return io.MultiReader(rs...)
}

type repeated struct {
	s   string
	n   int
	off int
}

func (r *repeated) Read(p []byte) (int, error) {
	w := 0
	for w < len(p) && r.n > 0 {
		c := copy(p[w:], r.s[r.off:])
		w += c
		r.off += c
		if r.off == len(r.s) {
			r.off, r.n = 0, r.n-1
		}
	}
	if w == 0 {
		return 0, io.EOF
	}
	return w, nil
}

// zipStream builds a ZIP whose entries are deflated from readers, so a part of hundreds of
// megabytes never sits in memory.
func zipStream(t testing.TB, entries ...zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e.name)
		if err == nil {
			_, err = io.Copy(w, e.r)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zipEntry struct {
	name string
	r    io.Reader
}

func docxParts(body ...io.Reader) []zipEntry {
	doc := io.MultiReader(append(append([]io.Reader{strings.NewReader(wordHead)}, body...), strings.NewReader(wordTail))...)
	return []zipEntry{
		{"[Content_Types].xml", strings.NewReader(contentTypes)},
		{"_rels/.rels", strings.NewReader(rootRels)},
		{"word/document.xml", doc},
	}
}

// zlibOf compresses what r yields.
func zlibOf(t testing.TB, r io.Reader) string {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	if _, err := io.Copy(zw, r); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.String()
}

// bomb is a small file that unpacks or parses into far more than its size.
type bomb struct {
	name string // file name given to Text
	data []byte
	want string // the message Text must fail with
}

func bombs(t testing.TB) []bomb {
	const mb = 1 << 20
	run := func(body string, n int, tail string) io.Reader {
		return io.MultiReader(repeatReader(body, n), strings.NewReader(tail))
	}
	pdfStream := func(content string) []byte {
		b := &pdfBuilder{}
		return buildPDF(b, "", content)
	}
	_ = pdfStream
	return []bomb{
		{"one-run.docx", zipStream(t, docxParts(strings.NewReader("<w:p><w:r><w:t>"), run("a", 300*mb, "</w:t></w:r></w:p>"))...),
			"more than 32.0 MiB of text"},
		{"many-runs.docx", zipStream(t, docxParts(run("<w:p><w:r><w:t>"+strings.Repeat("ab ", 1<<18)+"</w:t></w:r></w:p>", 400, ""))...),
			"more than 32.0 MiB of text"},
	}
}

func TestBombsStayBounded(t *testing.T) {
	for _, b := range bombs(t) {
		t.Run(b.name, func(t *testing.T) {
			var err error
			peak := peakHeap(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				_, err = Text(ctx, b.name, b.data, Limits{MaxBytes: 512 << 20})
			})
			t.Logf("%s: %d KiB input, peak heap %.1f MB, error %v", b.name, len(b.data)>>10, float64(peak)/1e6, err)
			assertInvalid(t, err, b.want)
			if peak > maxPeakHeap {
				t.Errorf("peak heap %.1f MB, want at most %d MB", float64(peak)/1e6, maxPeakHeap>>20)
			}
		})
	}
}

var _ = fmt.Sprint

func TestNearLimitPeak(t *testing.T) {
	const mb = 1 << 20
	data := zipStream(t, docxParts(repeatReader("<w:p><w:r><w:t>"+strings.Repeat("ab ", 1<<16)+"x</w:t></w:r></w:p>", 150))...)
	var err error
	var n int
	peak := peakHeap(func() {
		res, e := Text(context.Background(), "n.docx", data, Limits{})
		err, n = e, len(res.Text)
	})
	t.Logf("near-limit docx: %d KiB in, %d MiB text, peak %.1f MB, err %v", len(data)>>10, n/mb, float64(peak)/1e6, err)
}
