package sessions

import (
	"context"
	"encoding/base64"
	"fmt"
	"mime"
	"net/url"
	"path"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/images"
)

// Fetcher downloads a user-supplied public URL, refusing private addresses (SSRF guard).
type Fetcher interface {
	Fetch(ctx context.Context, rawURL string, maxBytes int64) (data []byte, contentType string, err error)
}

// Content limits: Bedrock takes images up to 3.75 MB and documents up to 4.5 MB.
const (
	MaxImageBytes    = 3_750_000
	MaxDocumentBytes = 4_500_000
	MaxContentBlocks = 20
	MaxTextBytes     = 200_000
	// maxDocumentName bounds the name of a file block, which the stored user message shows.
	maxDocumentName = 200
)

// imageFormats maps the image media types a content block may declare to their Media.Format.
var imageFormats = domain.ImageFormats()

var documentFormats = map[string]string{
	"application/pdf": "pdf", "text/plain": "txt", "text/csv": "csv", "text/markdown": "md", "text/html": "html",
	"application/msword": "doc", "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
	"application/vnd.ms-excel": "xls", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
}

// parseContent turns the execute body's content (a string or content blocks) into model parts
// and the text stored as the user message. The errors of the content's shape that the decoder
// found are reported here, in the order of the blocks, each before its values' errors.
func (s *Service) parseContent(ctx context.Context, c Content) ([]domain.Part, string, error) {
	switch c.form {
	case contentText:
		if strings.TrimSpace(c.Text) == "" {
			return nil, "", field("content", "must not be empty")
		}
		if len(c.Text) > MaxTextBytes {
			return nil, "", field("content", fmt.Sprintf("must be at most %d bytes", MaxTextBytes))
		}
		return []domain.Part{{Type: domain.PartText, Text: c.Text}}, c.Text, nil
	case contentBlocks:
		if len(c.Blocks) == 0 {
			return nil, "", field("content", "must not be empty")
		}
		if len(c.Blocks) > MaxContentBlocks {
			return nil, "", field("content", fmt.Sprintf("must have at most %d blocks", MaxContentBlocks))
		}
		var parts []domain.Part
		var text []string
		hasText := false
		textBytes := 0
		for i, b := range c.Blocks {
			p, label, err := s.block(ctx, &c, b, fmt.Sprintf("content.%d", i))
			if err != nil {
				return nil, "", err
			}
			parts = append(parts, p)
			text = append(text, label)
			hasText = hasText || (p.Type == domain.PartText && strings.TrimSpace(p.Text) != "")
			if textBytes += len(p.Text); textBytes > MaxTextBytes {
				return nil, "", field("content", fmt.Sprintf("the text blocks must be at most %d bytes together", MaxTextBytes))
			}
		}
		if !hasText && len(parts) == 0 {
			return nil, "", field("content", "must not be empty")
		}
		return parts, strings.Join(text, "\n"), nil
	case contentAbsent:
		return nil, "", field("content", "is required")
	}
	return nil, "", field("content", "must be a string or an array of content blocks")
}

// block is the model part of block b of c, at path at.
func (s *Service) block(ctx context.Context, c *Content, b Block, at string) (domain.Part, string, error) {
	if !b.object {
		return domain.Part{}, "", field(at, "must be an object")
	}
	if blockShapes[b.Type] != nil {
		if e, ok := c.firstUnknown(at); ok {
			return domain.Part{}, "", domain.Invalid([]domain.FieldError{e})
		}
	}
	switch b.Type {
	case "text":
		if strings.TrimSpace(b.Text) == "" {
			return domain.Part{}, "", field(at+".text", "must be a non-empty string")
		}
		return domain.Part{Type: domain.PartText, Text: b.Text}, b.Text, nil
	case "image_url":
		if b.ImageURL == nil {
			return domain.Part{}, "", field(at+".image_url", "must be an object with url")
		}
		if b.ImageURL.URL == "" {
			return domain.Part{}, "", field(at+".image_url.url", "must be a URL string")
		}
		data, format, err := s.load(ctx, b.ImageURL.URL, at+".image_url.url", imageFormats, MaxImageBytes)
		if err != nil {
			return domain.Part{}, "", err
		}
		return domain.Part{Type: domain.PartImage, Image: &domain.Media{Format: format, Data: data}}, "[image]", nil
	case "file":
		if b.FileURL == "" {
			return domain.Part{}, "", field(at+".file_url", "must be a URL string")
		}
		data, format, err := s.load(ctx, b.FileURL, at+".file_url", documentFormats, MaxDocumentBytes)
		if err != nil {
			return domain.Part{}, "", err
		}
		name := documentName(b.FileURL, format)
		return domain.Part{Type: domain.PartDocument, Document: &domain.Media{Format: format, Name: name, Data: data}}, "[file: " + name + "]", nil
	}
	switch t := b.typ.(type) {
	case nil:
		return domain.Part{}, "", field(at+".type", "is required: text, image_url or file")
	case string:
		return domain.Part{}, "", field(at+".type", fmt.Sprintf("unknown content block type %q: use text, image_url or file", t))
	}
	return domain.Part{}, "", field(at+".type", fmt.Sprintf("must be a string (text, image_url or file), not %s", domain.JSONType(b.typ)))
}

// load reads a data URL or fetches a public http(s) URL, checking type and size.
func (s *Service) load(ctx context.Context, raw, at string, formats map[string]string, limit int64) ([]byte, string, error) {
	if rest, ok := strings.CutPrefix(raw, "data:"); ok {
		meta, payload, ok := strings.Cut(rest, ",")
		mt, isB64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isB64 {
			return nil, "", field(at, "must be a base64 data URL (data:<media type>;base64,<data>)")
		}
		mt = strings.ToLower(mt)
		if _, ok := formats[mt]; !ok {
			return nil, "", field(at, fmt.Sprintf("media type %q is not allowed", mt))
		}
		if int64(base64.StdEncoding.DecodedLen(len(payload))) > limit+3 {
			return nil, "", field(at, fmt.Sprintf("is larger than the limit of %d bytes", limit))
		}
		data, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			return nil, "", field(at, "has invalid base64 data")
		}
		if int64(len(data)) > limit {
			return nil, "", field(at, fmt.Sprintf("is larger than the limit of %d bytes", limit))
		}
		// The bytes decide, as for uploads: a declared type is only a claim.
		format, seen, ok := dataFormat(mt, data)
		if !ok {
			return nil, "", field(at, fmt.Sprintf("declares %s, but its data is %s", mt, seen))
		}
		return data, format, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", field(at, "must be an http(s) URL or a base64 data URL")
	}
	if name, ok := images.MediaName(u.Path); ok && s.images != nil {
		// An uploaded image: read from storage, whatever host the client saw it under.
		data, ct, err := s.images.Open(ctx, name)
		if err != nil {
			if domain.KindOf(err) == domain.KindNotFound {
				return nil, "", field(at, "names no uploaded image (uploads expire after a day)")
			}
			return nil, "", err
		}
		format, ok := formats[ct]
		if !ok {
			return nil, "", field(at, fmt.Sprintf("content type %q is not allowed", ct))
		}
		return data, format, nil
	}
	if s.fetch == nil {
		return nil, "", field(at, "URLs cannot be fetched by this deployment; send a data URL")
	}
	data, ct, err := s.fetch.Fetch(ctx, raw, limit)
	if err != nil {
		return nil, "", &domain.Error{Kind: domain.KindInvalid, Message: at + ": could not be fetched: " + safeFetchError(err),
			Fields: []domain.FieldError{{Field: at, Message: "could not be fetched"}}, Err: err}
	}
	mt, _, _ := mime.ParseMediaType(ct)
	format, ok := formats[strings.ToLower(mt)]
	if !ok {
		return nil, "", field(at, fmt.Sprintf("content type %q is not allowed", mt))
	}
	return data, format, nil
}

func safeFetchError(err error) string {
	var de *domain.Error
	if ok := asDomain(err, &de); ok {
		return de.Message
	}
	return "the address did not answer with the file"
}

func documentName(u, format string) string {
	name := path.Base(strings.SplitN(strings.SplitN(u, "?", 2)[0], "#", 2)[0])
	name = strings.TrimSuffix(name, path.Ext(name))
	var b strings.Builder
	for _, r := range name {
		if r < 128 && (r == '-' || r == '_' || r == ' ' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 || strings.HasPrefix(u, "data:") {
		return "document-" + format
	}
	return domain.Clip(b.String(), maxDocumentName)
}

func field(name, msg string) error {
	return domain.Invalid([]domain.FieldError{{Field: name, Message: msg}})
}
