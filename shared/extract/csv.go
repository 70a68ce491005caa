package extract

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
)

// csvText renders a table as one line per row, each cell labelled with its column:
//
//	name: Widget; price: 3.50; colour: blue
//
// A chunk cut from the middle of a big table then still says what its numbers mean, which plain
// CSV lines ("Widget,3.50,blue") do not; empty cells are left out. The first row is the header when
// it looks like one (every cell filled, no two alike, none a number); otherwise rows are the values
// joined by "; ". The delimiter is a tab for TSV, else whichever of , ; tab | is most common in
// the first line (spreadsheets in many locales write ";"). Quotes are read leniently (a stray quote
// inside a field is kept) and rows may differ in length, so real-world exports read.
func csvText(ctx context.Context, in input) (output, error) {
	s, cs, err := decodeText(in.data)
	if err != nil {
		return output{}, err
	}
	r := csv.NewReader(strings.NewReader(s))
	r.Comma = ','
	if in.typ.MediaType == MediaTSV {
		r.Comma = '\t'
	} else {
		r.Comma = sniffDelimiter(s)
	}
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	if widestRow(s, r.Comma) > maxCSVFields {
		return output{}, invalidf("the CSV file has a row of more than %d columns, the most one extraction reads", maxCSVFields)
	}

	var (
		b      textBuf
		header []string
		row    int
	)
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, col := 0, 0
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line, col, err = pe.Line, pe.Column, pe.Err
			}
			return output{}, invalidf("the CSV file is malformed at line %d, column %d: %v", line, col, err)
		}
		row++
		if row%1024 == 0 && ctx.Err() != nil {
			return output{}, contextError(ctx, "at row "+strconv.Itoa(row))
		}
		for i := range rec {
			rec[i] = strings.Join(strings.Fields(rec[i]), " ")
		}
		if row == 1 && isHeader(rec) {
			header = rec
			continue
		}
		if !writeCSVLine(&b, header, rec, in.lim.MaxText) || b.Len() > in.lim.MaxText {
			return output{}, invalidf("the file holds more than %s of text, the limit", formatSize(in.lim.MaxText))
		}
	}
	if b.Len() == 0 && header != nil {
		// A header without rows still names what the table is about.
		b.WriteString(strings.Join(header, "; "))
	}
	return output{text: b.String(), charset: cs}, nil
}

// writeCSVLine writes one row on a line of its own, cells joined by "; "; cells beyond the header
// are labelled "column N". It writes into b directly (a row of two million cells made a copy per
// cell and then one of the whole line) and stops, reporting false, once b holds more than limit.
func writeCSVLine(b *textBuf, header, rec []string, limit int) bool {
	first := true
	for i, v := range rec {
		if v == "" {
			continue
		}
		if first {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			first = false
		} else {
			b.WriteString("; ")
		}
		switch {
		case header == nil:
		case i < len(header):
			b.WriteString(header[i])
			b.WriteString(": ")
		default:
			b.WriteString("column ")
			b.WriteString(strconv.Itoa(i + 1))
			b.WriteString(": ")
		}
		b.WriteString(v)
		if b.Len() > limit {
			return false
		}
	}
	return true
}

// isHeader reports whether a first row reads as column names.
func isHeader(rec []string) bool {
	if len(rec) < 2 {
		return len(rec) == 1 && rec[0] != "" && !isNumber(rec[0])
	}
	seen := make(map[string]bool, len(rec))
	for _, v := range rec {
		if v == "" || isNumber(v) || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}

// maxCSVFields bounds the cells of one row: encoding/csv keeps about 60 bytes per cell of a row
// while reading it, so one row of two million cells (4 MiB) took the heap past 240 MB.
const maxCSVFields = 1 << 16

// widestRow counts the cells of the widest row, reading quotes as sniffDelimiter does.
func widestRow(s string, comma rune) int {
	widest, n, quoted := 0, 1, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case r == comma && !quoted:
			n++
		case r == '\n' && !quoted:
			widest, n = max(widest, n), 1
		}
	}
	return max(widest, n)
}

// sniffDelimiter picks the delimiter that occurs most often outside quotes in the first line.
func sniffDelimiter(s string) rune {
	counts := map[rune]int{}
	quoted := false
	for _, r := range s {
		if r == '\n' && !quoted {
			break
		}
		switch r {
		case '"':
			quoted = !quoted
		case ',', ';', '\t', '|':
			if !quoted {
				counts[r]++
			}
		}
	}
	best, n := ',', 0
	for _, d := range []rune{',', ';', '\t', '|'} {
		if counts[d] > n {
			best, n = d, counts[d]
		}
	}
	return best
}
