package domain

import (
	"slices"
	"strings"
	"testing"
)

// TestImageTypes: each image media type maps to the format Bedrock Converse names it by and to
// the extension of an uploaded image's name, and back from either; other types are refused.
func TestImageTypes(t *testing.T) {
	for _, tc := range []struct{ mediaType, format, ext string }{
		{"image/png", "png", "png"},
		{"image/jpeg", "jpeg", "jpg"},
		{"image/gif", "gif", "gif"},
		{"image/webp", "webp", "webp"},
	} {
		if got, ok := ImageFormat(tc.mediaType); !ok || got != tc.format {
			t.Errorf("ImageFormat(%q) = %q, %v; want %q", tc.mediaType, got, ok, tc.format)
		}
		if got, ok := ImageExt(tc.mediaType); !ok || got != tc.ext {
			t.Errorf("ImageExt(%q) = %q, %v; want %q", tc.mediaType, got, ok, tc.ext)
		}
		if got := ImageFormats()[tc.mediaType]; got != tc.format {
			t.Errorf("ImageFormats()[%q] = %q, want %q", tc.mediaType, got, tc.format)
		}
		if !slices.Contains(ImageExts(), tc.ext) {
			t.Errorf("ImageExts() = %v, lacks %q", ImageExts(), tc.ext)
		}
		for _, f := range []string{tc.format, tc.ext, strings.ToUpper(tc.format)} {
			if got, ok := ImageMediaType(f); !ok || got != tc.mediaType {
				t.Errorf("ImageMediaType(%q) = %q, %v; want %q", f, got, ok, tc.mediaType)
			}
		}
	}
	for _, f := range []string{"bmp", "svg", "pdf", "", "image/png"} {
		if mt, ok := ImageMediaType(f); ok {
			t.Errorf("ImageMediaType(%q) = %q, want refused", f, mt)
		}
	}
	for _, mt := range []string{"image/bmp", "image/svg+xml", "application/pdf", "", "IMAGE/PNG"} {
		if f, ok := ImageFormat(mt); ok {
			t.Errorf("ImageFormat(%q) = %q, want refused", mt, f)
		}
		if e, ok := ImageExt(mt); ok {
			t.Errorf("ImageExt(%q) = %q, want refused", mt, e)
		}
	}
	if n := len(ImageFormats()); n != 4 {
		t.Errorf("ImageFormats has %d types, want 4", n)
	}
}
