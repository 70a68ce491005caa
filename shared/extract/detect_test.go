package extract

import (
	"testing"
)

func TestDetect(t *testing.T) {
	gif := []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
	gz := []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	mp4 := append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), make([]byte, 16)...)
	wav := append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), make([]byte, 24)...)
	tests := []struct {
		name, file string
		head       []byte
		media      string
		fileType   FileType
	}{
		{"markdown by extension", "README.md", []byte("# Title\n\nText with, commas, here\nand, more, commas\n"), MediaMarkdown, FileDocument},
		{"markdown starting with html", "notes.markdown", []byte("<div align=\"center\">logo</div>\n\n# Title\n"), MediaMarkdown, FileDocument},
		{"csv by bytes", "export", []byte("a,b,c\n1,2,3\n4,5,6\n"), MediaCSV, FileData},
		{"one-column csv by extension", "ids.csv", []byte("id\n1\n2\n"), MediaCSV, FileData},
		{"prose with commas stays text", "story.txt", []byte("one, two, three\nfour, five, six\n"), MediaText, FileDocument},
		{"json by parsing", "data.json", []byte(`{"a": [1, 2]}`), MediaJSON, FileData},
		{"json extension, not json", "data.json", []byte("not json at all"), MediaText, FileDocument},
		{"html by bytes", "page", []byte("<!DOCTYPE html><html><body>hi</body></html>"), MediaHTML, FileDocument},
		{"log", "server.log", []byte("2024-01-01 started\n"), MediaText, FileDocument},
		{"code by extension", "main.go", []byte("package main\n"), MediaText, FileCode},
		{"python by shebang", "tool", []byte("#!/usr/bin/env python3\nprint(1)\n"), "text/x-python", FileCode},
		{"xml", "feed.xml", []byte(`<?xml version="1.0"?><root/>`), "text/xml", FileData},
		{"pdf", "a.bin", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj"), MediaPDF, FileDocument},
		{"exe named txt", "notes.txt", minimalExe, "application/vnd.microsoft.portable-executable", FileOther},
		{"image", "x.txt", gif, "image/gif", FileImage},
		{"archive", "x.gz", gz, "application/gzip", FileArchive},
		{"video", "clip.mp4", mp4, "video/mp4", FileVideo},
		{"audio", "a.wav", wav, "audio/wav", FileAudio},
		{"unknown binary", "blob", []byte{0x00, 0x01, 0x02, 0x03, 0xfe}, MediaUnknown, FileOther},
		{"empty", "x.txt", nil, MediaEmpty, FileOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Detect(tt.file, tt.head)
			if got.MediaType != tt.media || got.FileType != tt.fileType {
				t.Errorf("Detect(%q) = %s, %s; want %s, %s", tt.file, got.MediaType, got.FileType, tt.media, tt.fileType)
			}
		})
	}
}

func TestSupported(t *testing.T) {
	for media, want := range map[string]bool{
		MediaText: true, MediaMarkdown: true, MediaHTML: true, MediaCSV: true, MediaJSON: true,
		MediaPDF: true, MediaDOCX: true, "text/x-python": true,
		MediaDOC: false, "image/png": false, "text/xml": false, "text/rtf": false, MediaZip: false,
	} {
		if got := (Type{MediaType: media}).Supported(); got != want {
			t.Errorf("Supported(%s) = %v, want %v", media, got, want)
		}
	}
}
