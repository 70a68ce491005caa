package extract

import (
	"mime"
	"path"
	"strings"

	"github.com/gabriel-vasile/mimetype"
)

// FileType is the coarse class of a file that clients filter on (the Atthene file_type values).
type FileType string

// The file classes of the contract.
const (
	FileDocument FileType = "document"
	FileData     FileType = "data"
	FileImage    FileType = "image"
	FileVideo    FileType = "video"
	FileAudio    FileType = "audio"
	FileArchive  FileType = "archive"
	FileCode     FileType = "code"
	FileOther    FileType = "other"
)

// Media types this package names itself, beyond what mimetype reports.
const (
	MediaText     = "text/plain"
	MediaMarkdown = "text/markdown"
	MediaHTML     = "text/html"
	MediaXHTML    = "application/xhtml+xml"
	MediaCSV      = "text/csv"
	MediaTSV      = "text/tab-separated-values"
	MediaJSON     = "application/json"
	MediaNDJSON   = "application/x-ndjson"
	MediaPDF      = "application/pdf"
	MediaDOCX     = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	MediaDOC      = "application/msword"
	MediaZip      = "application/zip"
	MediaOLE      = "application/x-ole-storage"
	MediaEmpty    = "application/x-empty"
	MediaUnknown  = "application/octet-stream"
)

// Type is what Detect concludes about a file.
type Type struct {
	// MediaType is the MIME type without parameters, judged by the bytes.
	MediaType string
	// FileType is the coarse class of MediaType.
	FileType FileType
	// Charset is the character set the bytes suggest for text ("utf-8", "utf-16le", …), or "".
	Charset string
}

// Supported reports whether Text can extract text from files of this type.
func (t Type) Supported() bool {
	return extractorFor(t.MediaType) != nil
}

// Text-family extensions: the bytes cannot tell these formats apart reliably (every CSV is also
// text, a Markdown file is text with conventions), so a known extension names the format as long as
// the bytes are text. JSON is the exception: it must also parse.
var textExt = map[string]string{
	".txt": MediaText, ".text": MediaText, ".log": MediaText,
	".md": MediaMarkdown, ".markdown": MediaMarkdown, ".mdown": MediaMarkdown, ".mkd": MediaMarkdown,
	".csv": MediaCSV, ".tsv": MediaTSV, ".tab": MediaTSV,
	".html": MediaHTML, ".htm": MediaHTML, ".xhtml": MediaXHTML,
	".json": MediaJSON, ".jsonl": MediaNDJSON, ".ndjson": MediaNDJSON,
}

// Source-code extensions. Code is text to the bytes; only the name says it is code.
var codeExt = map[string]bool{
	".go": true, ".py": true, ".js": true, ".mjs": true, ".ts": true, ".tsx": true, ".jsx": true,
	".java": true, ".kt": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".hpp": true,
	".cs": true, ".rb": true, ".php": true, ".rs": true, ".swift": true, ".scala": true,
	".sh": true, ".bash": true, ".ps1": true, ".sql": true, ".lua": true, ".pl": true, ".r": true,
	".css": true, ".scss": true, ".yaml": true, ".yml": true, ".toml": true, ".ini": true,
}

// Detect judges a file's media type from its first bytes (head; 4 KiB are enough, more is
// ignored) and uses the name's extension only where bytes cannot decide: among text formats
// (plain, Markdown, CSV, HTML, JSON, code) and among ZIP-based formats whose marker lies beyond
// the head. A name never makes binary bytes into text: an executable named notes.txt is an
// executable.
func Detect(name string, head []byte) Type {
	if len(head) == 0 {
		return Type{MediaType: MediaEmpty, FileType: FileOther}
	}
	m := mimetype.Detect(head)
	media, params, err := mime.ParseMediaType(m.String())
	if err != nil {
		media = m.String()
	}
	charset := params["charset"]
	ext := strings.ToLower(path.Ext(name))

	if media == "application/vnd.microsoft.portable-executable" && !hasBinaryBytes(head) {
		// mimetype's signature for executables is just "MZ"; a real one has NUL bytes in its
		// header, so a text that happens to start with MZ is still text.
		m = mimetype.Lookup(MediaText)
		media, charset = MediaText, ""
	}
	if isText(m) {
		if charset == "" {
			charset = "utf-8"
		}
		return Type{MediaType: refineText(media, ext, charset), FileType: classifyText(media, ext), Charset: charset}
	}
	if media == MediaZip && ext == ".docx" {
		// A DOCX whose "word/" entries start after the first 4 KiB looks like any ZIP to mimetype;
		// Text checks for word/document.xml before believing the name.
		media = MediaDOCX
	}
	return Type{MediaType: media, FileType: classify(media)}
}

// hasBinaryBytes reports whether b holds any byte that never occurs in text.
func hasBinaryBytes(b []byte) bool {
	for _, c := range b {
		if isBinaryByte(c) {
			return true
		}
	}
	return false
}

// isText reports whether mimetype placed the bytes under text/plain in its tree (which covers
// HTML, CSV, JSON, XML, scripts …).
func isText(m *mimetype.MIME) bool {
	for ; m != nil; m = m.Parent() {
		if m.Is(MediaText) {
			return true
		}
	}
	return false
}

// refineText picks the text format: the extension when it names a text format (JSON only when
// the bytes parse as JSON), else what the bytes say.
func refineText(media, ext, charset string) string {
	bytesJSON := media == MediaJSON || media == MediaNDJSON || strings.HasSuffix(media, "+json")
	if byExt, ok := textExt[ext]; ok {
		switch byExt {
		case MediaJSON:
			if bytesJSON {
				return MediaJSON
			}
			return MediaText
		case MediaNDJSON:
			// mimetype recognises NDJSON only with two or more lines; Text validates each line.
			return MediaNDJSON
		}
		return byExt
	}
	if bytesJSON {
		return MediaJSON
	}
	if codeExt[ext] {
		return MediaText
	}
	return media
}

// classifyText is the file class of a text format.
func classifyText(media, ext string) FileType {
	if codeExt[ext] {
		return FileCode
	}
	switch textExt[ext] {
	case MediaCSV, MediaTSV, MediaNDJSON:
		return FileData
	case MediaJSON:
		if media == MediaJSON || strings.HasSuffix(media, "+json") {
			return FileData
		}
	case "":
	default:
		return FileDocument
	}
	return classify(media)
}

// classify maps a media type to its file class.
func classify(media string) FileType {
	switch media {
	case MediaPDF, MediaDOCX, MediaDOC, MediaText, MediaMarkdown, MediaHTML, MediaXHTML,
		"text/rtf", "application/vnd.oasis.opendocument.text",
		"application/vnd.openxmlformats-officedocument.presentationml.presentation",
		"application/vnd.ms-powerpoint", "application/vnd.oasis.opendocument.presentation",
		"application/epub+zip":
		return FileDocument
	case MediaCSV, MediaTSV, MediaJSON, MediaNDJSON, "text/xml", "application/xml",
		"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
		"application/vnd.ms-excel", "application/vnd.oasis.opendocument.spreadsheet",
		"application/vnd.apache.parquet", "application/vnd.sqlite3", "application/x-sqlite3":
		return FileData
	case MediaZip, "application/x-7z-compressed", "application/x-rar-compressed", "application/vnd.rar",
		"application/gzip", "application/x-tar", "application/x-bzip2", "application/x-xz",
		"application/zstd", "application/x-lzip", "application/vnd.ms-cab-compressed",
		"application/x-cpio", "application/x-archive", "application/x-unix-archive":
		return FileArchive
	case "text/javascript", "text/x-python", "text/x-php", "text/x-perl", "text/x-ruby",
		"text/x-shellscript", "text/x-lua", "text/x-tcl", "application/wasm", "application/x-java-applet":
		return FileCode
	}
	switch {
	case strings.HasPrefix(media, "image/"):
		return FileImage
	case strings.HasPrefix(media, "video/"):
		return FileVideo
	case strings.HasPrefix(media, "audio/"):
		return FileAudio
	case strings.HasSuffix(media, "+json"):
		return FileData
	case strings.HasSuffix(media, "+xml"):
		return FileData
	}
	return FileOther
}
