package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Heading is a section heading of an extracted text, for a chunk to name the section it is
// from (a knowledge base's chunking_strategy.contextual_headers). Headings are what the format
// marks as such: Markdown's ATX (# …) and setext (a line underlined with = or -) headings in
// Markdown and plain text, a plain-text line in capitals standing alone before an indented
// block (a manual page's NAME, DESCRIPTION …), HTML's h1–h6, DOCX paragraphs of the Title,
// Subtitle and Heading N styles. PDF, CSV and JSON have none.
type Heading struct {
	// Offset is the byte offset in Result.Text of the heading's first line.
	Offset int
	// Level is 1 (a title, h1, #, a setext =) to 6; 2 for a Subtitle, and for a manual page's
	// section.
	Level int
	// Text is the heading's words, whitespace collapsed, without markup (no #, no underline),
	// at most MaxHeadingBytes.
	Text string
}

// MaxHeadingBytes bounds a heading's Text (a "heading" of a page of text is cut at a word).
const MaxHeadingBytes = 200

// heading is a heading an extractor of a structured format (HTML, DOCX) saw: its level and
// text as written to the layout, located in the normalised text afterwards.
type heading struct {
	level int
	text  string
}

// headingText collapses a heading's whitespace and bounds it to MaxHeadingBytes, cut at a word
// where one ends in the bound (else between characters).
func headingText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxHeadingBytes {
		return s
	}
	cut := MaxHeadingBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut+1], ' '); sp > 0 {
		cut = sp
	}
	return s[:cut]
}

// locate finds the headings a structured extractor saw in the normalised text, in order: each
// at the first place its first line occurs after the one before. A heading not found (the
// normalisation changed it past recognition) is left out.
func locate(text string, heads []heading) []Heading {
	var out []Heading
	at := 0
	for _, h := range heads {
		first, _, _ := strings.Cut(normalize(h.text), "\n")
		if strings.TrimSpace(first) == "" {
			continue
		}
		i := strings.Index(text[at:], first)
		if i < 0 {
			continue
		}
		// The heading's line starts where its text does, or earlier on the same line (a list
		// marker, a table cell before it).
		off := at + i
		if nl := strings.LastIndexByte(text[:off], '\n'); nl >= 0 {
			off = max(nl+1, at)
		} else {
			off = max(0, at)
		}
		out = append(out, Heading{Offset: off, Level: h.level, Text: headingText(h.text)})
		at += i + len(first)
	}
	return out
}

// textHeadings finds the headings of normalised plain text or Markdown: ATX headings, setext
// headings of one line (the line before it blank, as a title stands), outside fenced code
// blocks; and in plain text (not Markdown, where a line of capitals is a paragraph) a line in
// capitals at the margin standing alone between a blank line and an indented one, as a manual
// page's sections are set.
func textHeadings(text string, markdown bool) []Heading {
	var out []Heading
	var fence string // the fence of the open code block
	prevBlank := true
	for off := 0; off < len(text); {
		line, rest, _ := strings.Cut(text[off:], "\n")
		next := off + len(line) + 1
		nextLine, _, _ := strings.Cut(rest, "\n")
		if next > len(text) {
			nextLine = ""
		}
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		switch {
		case fence != "":
			if indent < 4 && strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" ") == "" {
				fence = ""
			}
		case indent < 4 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
		case indent < 4 && strings.HasPrefix(trimmed, "#"):
			if level, t, ok := atx(trimmed); ok {
				out = append(out, Heading{Offset: off, Level: level, Text: headingText(t)})
			}
		case indent < 4 && prevBlank && line != "" && rest != "" && setext(nextLine) > 0:
			if t := headingText(line); t != "" {
				out = append(out, Heading{Offset: off, Level: setext(nextLine), Text: t})
				next += len(nextLine) + 1 // the underline is not a heading's text
				line = nextLine
			}
		case !markdown && indent == 0 && prevBlank && capsLine(line) && indented(nextLine):
			out = append(out, Heading{Offset: off, Level: 2, Text: headingText(line)})
		}
		prevBlank = strings.TrimSpace(line) == ""
		off = next
	}
	return out
}

// atx reads an ATX heading: 1 to 6 # and a space (or nothing), its closing #s left out.
func atx(s string) (level int, text string, ok bool) {
	for level < len(s) && s[level] == '#' {
		level++
	}
	if level > 6 || (level < len(s) && s[level] != ' ' && s[level] != '\t') {
		return 0, "", false
	}
	text = strings.TrimSpace(s[level:])
	if t := strings.TrimRight(text, "#"); t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t") {
		text = strings.TrimSpace(t)
	}
	return level, text, text != ""
}

// setext is the level a setext underline gives (1 for =, 2 for -), or 0 for another line: at
// least three of one of them, indented at most three spaces.
func setext(line string) int {
	t := strings.TrimRight(strings.TrimLeft(line, " "), " \t")
	if len(line)-len(strings.TrimLeft(line, " ")) > 3 || len(t) < 3 {
		return 0
	}
	switch strings.Trim(t, string(t[0])) {
	case "":
		if t[0] == '=' {
			return 1
		}
		if t[0] == '-' {
			return 2
		}
	}
	return 0
}

// capsLine reports a line of capitals: at least two letters, none lower case, at most 60
// characters, of letters, digits, spaces and a little punctuation.
func capsLine(s string) bool {
	if len(s) > 60 {
		return false
	}
	letters := 0
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			letters++
		case unicode.IsLetter(r):
			return false
		case unicode.IsDigit(r) || strings.ContainsRune(" -&,/()'.:", r):
		default:
			return false
		}
	}
	return letters >= 2
}

// indented reports a line with text that starts with a space or tab.
func indented(s string) bool {
	return (strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\t")) && strings.TrimSpace(s) != ""
}
