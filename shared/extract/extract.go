// Package extract turns an uploaded file into plain text for the knowledge base: it judges the
// media type by the bytes (Detect) and extracts the readable text of plain text, Markdown, HTML,
// CSV, JSON, PDF and DOCX files (Text). It is pure logic over bytes: no I/O, no AWS.
//
// Every failure is a *domain.Error whose message a user can act on ("the PDF is encrypted", "no
// text could be extracted from this PDF (scanned or image-only?)"); a success always carries text
// with at least one letter or digit, so an ingestion never "succeeds" with nothing to embed.
package extract

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// Limits bound the work of one extraction. Zero fields take the defaults.
type Limits struct {
	// MaxBytes is the largest input accepted (default 50 MiB). A DOCX may unpack to at most
	// 32 times this much XML.
	MaxBytes int
	// MaxPages is the largest PDF page count accepted (default 2000).
	MaxPages int
	// MaxText is the most extracted text kept, in bytes (default 32 MiB); more is an error, not a
	// silent cut.
	MaxText int
}

// Defaults for zero Limits fields.
const (
	DefaultMaxBytes = 50 << 20
	DefaultMaxPages = 2000
	DefaultMaxText  = 32 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultMaxPages
	}
	if l.MaxText <= 0 {
		l.MaxText = DefaultMaxText
	}
	return l
}

// Result is the text of one file and what was learnt on the way.
type Result struct {
	// Text is the normalised text: UTF-8, LF line ends, no NUL bytes, no trailing spaces, at most
	// one blank line in a row; paragraphs and PDF pages are separated by a blank line ("\n\n").
	Text string
	// MediaType and FileType are as Detect judged them.
	MediaType string
	FileType  FileType
	// Charset is the encoding text input was decoded from ("utf-8", "utf-16le", "windows-1252"…);
	// empty for PDF and DOCX.
	Charset string
	// Pages is the PDF page count; 0 for other formats.
	Pages int
	// Warnings name parts that were skipped, such as PDF pages without a text layer.
	Warnings []string
	// Headings are the text's section headings, in order (see Heading): none for a format that
	// marks none.
	Headings []Heading
}

// SupportedFormats lists the formats Text reads, for messages.
const SupportedFormats = "plain text, Markdown, HTML, CSV, JSON, PDF, DOCX"

// output is what a format's extractor returns before normalisation.
type output struct {
	text     string
	media    string // set when the content overrules Detect (a .json file that is not JSON)
	charset  string
	pages    int
	warnings []string
	headings []heading // as a structured format's extractor saw them (HTML, DOCX)
}

// input is one extraction job.
type input struct {
	name string
	data []byte
	typ  Type
	lim  Limits
}

type extractor func(ctx context.Context, in input) (output, error)

// extractorFor is the extractor of a media type, or nil when the type is not supported.
func extractorFor(media string) extractor {
	switch media {
	case MediaText, MediaMarkdown:
		return plainText
	case MediaHTML, MediaXHTML:
		return htmlText
	case MediaCSV, MediaTSV:
		return csvText
	case MediaJSON, MediaNDJSON:
		return jsonText
	case MediaPDF:
		return pdfText
	case MediaDOCX:
		return docxText
	}
	if classify(media) == FileCode && strings.HasPrefix(media, "text/") {
		// Scripts that mimetype recognises by a shebang are plain text to a reader.
		return plainText
	}
	return nil
}

// Text extracts the readable text of a file. name supplies the extension that refines Detect for
// text formats; data is the whole file. Errors are *domain.Error of kind invalid (KindTooLarge
// when the file exceeds lim.MaxBytes); a cancelled context returns its error, a passed deadline an
// invalid error that still matches context.DeadlineExceeded with errors.Is.
//
// Give ctx a deadline. Text returns when it passes: PDF extraction runs in its own goroutine that
// checks the context between pages (a page already started is finished in the background, its
// result dropped); CSV, JSON and DOCX check it every few thousand rows, values or XML tokens, HTML
// after parsing (parsing runs at tens of MB/s, so within the size cap it is short).
func Text(ctx context.Context, name string, data []byte, lim Limits) (res Result, err error) {
	lim = lim.withDefaults()
	if len(data) == 0 {
		return Result{}, invalidf("the file is empty")
	}
	if len(data) > lim.MaxBytes {
		return Result{}, domain.Errorf(domain.KindTooLarge, "the file is %s; the limit is %s",
			formatSize(len(data)), formatSize(lim.MaxBytes))
	}
	typ := Detect(name, data)
	fn := extractorFor(typ.MediaType)
	if fn == nil {
		return Result{}, unsupported(typ, name)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, contextError(ctx, "")
	}
	defer func() {
		// The PDF reader and the XML and HTML parsers are not trusted to stay calm on hostile input.
		if r := recover(); r != nil {
			res = Result{}
			err = domain.Wrap(domain.KindInvalid, fmt.Errorf("panic: %v", r),
				fmt.Sprintf("the %s is damaged and could not be read", label(typ.MediaType)))
		}
	}()
	out, err := fn(ctx, input{name: name, data: data, typ: typ, lim: lim})
	if err != nil {
		return Result{}, err
	}
	if out.media != "" && out.media != typ.MediaType {
		typ.MediaType, typ.FileType = out.media, classify(out.media)
	}
	text := normalize(out.text)
	if len(text) > lim.MaxText {
		return Result{}, invalidf("the file holds more than %s of text, the limit", formatSize(lim.MaxText))
	}
	if !hasWords(text) {
		if typ.MediaType == MediaPDF {
			return Result{}, errScanned()
		}
		return Result{}, invalidf("no text could be extracted from this %s: it has no letters or digits", label(typ.MediaType))
	}
	var heads []Heading
	switch typ.MediaType {
	case MediaText, MediaMarkdown:
		heads = textHeadings(text, typ.MediaType == MediaMarkdown)
	default:
		heads = locate(text, out.headings)
	}
	return Result{
		Text:      text,
		MediaType: typ.MediaType,
		FileType:  typ.FileType,
		Charset:   out.charset,
		Pages:     out.pages,
		Warnings:  out.warnings,
		Headings:  heads,
	}, nil
}

// unsupported is the error for a type Text does not read, with a hint for the common near misses.
func unsupported(typ Type, name string) error {
	ext := strings.ToLower(path.Ext(name))
	switch {
	case typ.MediaType == MediaEmpty:
		return invalidf("the file is empty")
	case typ.MediaType == MediaOLE && ext == ".docx":
		return invalidf("the DOCX is encrypted (password-protected Office files cannot be read); save it without a password")
	case typ.MediaType == MediaDOC || typ.MediaType == MediaOLE && ext == ".doc":
		return invalidf("unsupported file type %s: old Word .doc files cannot be read; save it as DOCX or PDF (supported: %s)", typ.MediaType, SupportedFormats)
	}
	return invalidf("unsupported file type %s (supported: %s)", typ.MediaType, SupportedFormats)
}

// contextError reports a stopped extraction: a passed deadline is the file's problem (too big or
// too complex for the time budget) and says where it stopped; a cancellation is the caller's.
func contextError(ctx context.Context, where string) error {
	err := ctx.Err()
	if !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("extract: %w", err)
	}
	msg := "text extraction ran out of time"
	if where != "" {
		msg += " " + where
	}
	return domain.Wrap(domain.KindInvalid, err, msg+"; the file may be too large or too complex to process")
}

// invalidf is a client-safe invalid_request_error.
func invalidf(format string, args ...any) *domain.Error {
	return domain.Errorf(domain.KindInvalid, format, args...)
}

// wrapInvalid is an invalid_request_error with a cause for the log.
func wrapInvalid(err error, msg string) *domain.Error {
	return domain.Wrap(domain.KindInvalid, err, msg)
}

// errScanned is the error for a PDF without a text layer.
func errScanned() *domain.Error {
	return invalidf("no text could be extracted from this PDF (scanned or image-only?); run OCR on it or upload a PDF with a text layer")
}

// label names a media type for messages.
func label(media string) string {
	switch media {
	case MediaPDF:
		return "PDF"
	case MediaDOCX:
		return "DOCX"
	case MediaHTML, MediaXHTML:
		return "HTML file"
	case MediaCSV, MediaTSV:
		return "CSV file"
	case MediaJSON, MediaNDJSON:
		return "JSON file"
	case MediaMarkdown:
		return "Markdown file"
	}
	return "file"
}

// formatSize renders a byte count for messages.
func formatSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
