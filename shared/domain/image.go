package domain

import "strings"

// imageType is one image media type the service takes: from an upload, in a content block, and
// on to a model.
type imageType struct {
	mediaType string // what the bytes are sniffed as and S3 stores
	format    string // Media.Format: the name Bedrock Converse knows it by
	ext       string // the name extension of an uploaded image
}

// imageTypes is the one table of image types.
var imageTypes = []imageType{
	{"image/png", "png", "png"},
	{"image/jpeg", "jpeg", "jpg"},
	{"image/gif", "gif", "gif"},
	{"image/webp", "webp", "webp"},
}

// ImageFormat returns the Media.Format of an image media type, and false for a type that is not
// an image the service takes.
func ImageFormat(mediaType string) (string, bool) {
	for _, t := range imageTypes {
		if t.mediaType == mediaType {
			return t.format, true
		}
	}
	return "", false
}

// ImageExt returns the name extension of an uploaded image of mediaType, and false for a type
// that is not an image the service takes.
func ImageExt(mediaType string) (string, bool) {
	for _, t := range imageTypes {
		if t.mediaType == mediaType {
			return t.ext, true
		}
	}
	return "", false
}

// ImageExts lists the name extensions of uploaded images.
func ImageExts() []string {
	exts := make([]string, len(imageTypes))
	for i, t := range imageTypes {
		exts[i] = t.ext
	}
	return exts
}

// ImageFormats maps each image media type to its Media.Format.
func ImageFormats() map[string]string {
	m := make(map[string]string, len(imageTypes))
	for _, t := range imageTypes {
		m[t.mediaType] = t.format
	}
	return m
}

// ImageMediaType returns the media type of an image's Media.Format (or name extension), in any
// case, and false for a format that is no image the service takes.
func ImageMediaType(format string) (string, bool) {
	format = strings.ToLower(format)
	for _, t := range imageTypes {
		if t.format == format || t.ext == format {
			return t.mediaType, true
		}
	}
	return "", false
}
