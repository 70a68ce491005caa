package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/agentorch/agentorch/shared/domain"
)

// Content is an execute body's content: a text, or content blocks. The API's one decoder reads
// it (ContentInput): the decoder checks its shape, and what it found wrong waits here for
// parseContent, which reports it in turn with the errors of the values, block by block.
type Content struct {
	// Text is the content sent as a string.
	Text string
	// Blocks are the content sent as an array.
	Blocks []Block
	form   contentForm
	// unknown are the keys of blocks that their type does not have, as the decoder words them
	// ("content.0.zz": "unknown field; the fields are type, text"), in the decoder's order.
	unknown []domain.FieldError
}

// contentForm is the JSON type the content was sent as.
type contentForm int

const (
	contentAbsent contentForm = iota // absent or null
	contentText
	contentBlocks
	contentOther // a number, a boolean or an object: refused
)

// TextContent is content sent as a string.
func TextContent(s string) Content { return Content{Text: s, form: contentText} }

// ContentInput is the body the API's decoder reads the content from ({"content": …}). Every
// value of the wrong JSON type within it is left out (null), and parseContent words it as it
// words a missing one, so only the unknown keys are kept.
type ContentInput struct {
	Content Content `json:"content"`
}

// TakeShape keeps the unknown keys of the content's blocks for parseContent.
func (in *ContentInput) TakeShape(unknown, _ []domain.FieldError) { in.Content.unknown = unknown }

// ShapeOf is the type the decoder checks a content value against: a string, or an array of
// blocks; any other value is Content's to refuse (parseContent).
func (Content) ShapeOf(v any) reflect.Type {
	switch v.(type) {
	case string:
		return reflect.TypeFor[string]()
	case []any:
		return reflect.TypeFor[[]*blockJSON]()
	}
	return nil
}

// UnmarshalJSON reads a string or an array of blocks (json.Decoder, unknown fields refused);
// any other value is kept as refused, for parseContent to say so.
func (c *Content) UnmarshalJSON(b []byte) error {
	*c = Content{}
	switch first(b) {
	case 'n':
		return nil
	case '"':
		c.form = contentText
		return json.Unmarshal(b, &c.Text)
	case '[':
		c.form = contentBlocks
		var blocks []*blockJSON
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&blocks); err != nil {
			return err
		}
		c.Blocks = make([]Block, len(blocks))
		for i, j := range blocks {
			var err error
			if c.Blocks[i], err = j.block(); err != nil {
				return err
			}
		}
		return nil
	}
	c.form = contentOther
	return nil
}

// MarshalJSON writes the content as it was sent (a queued execution keeps it).
func (c Content) MarshalJSON() ([]byte, error) {
	switch c.form {
	case contentText:
		return marshal(c.Text)
	case contentBlocks:
		return marshal(c.Blocks)
	}
	return []byte("null"), nil
}

// firstUnknown is the first unknown key the decoder found under path.
func (c *Content) firstUnknown(path string) (domain.FieldError, bool) {
	for _, e := range c.unknown {
		if strings.HasPrefix(e.Field, path+".") {
			return e, true
		}
	}
	return domain.FieldError{}, false
}

// Block is one content block; its type decides its fields.
type Block struct {
	// Type is the block's type when it is a string: text, image_url or file are taken.
	Type     string
	Text     string
	ImageURL *ImageURL
	FileURL  string
	object   bool // false: the block was not an object
	typ      any  // the type as sent (nil when absent)
}

// ImageURL is the image of an image_url block.
type ImageURL struct {
	URL string `json:"url"`
	// Detail is taken as sent and not used (Bedrock has no such choice).
	Detail json.RawMessage `json:"detail,omitempty"`
}

// The shapes of a block by its type, with the fields (in the order the "unknown field" error
// lists them) that the decoder holds it to.
type (
	textBlock struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	imageBlock struct {
		Type     string    `json:"type"`
		ImageURL *ImageURL `json:"image_url"`
	}
	fileBlock struct {
		Type    string `json:"type"`
		FileURL string `json:"file_url"`
	}
	// otherBlock is a block whose type is not one of the three (its type is the error), and
	// the shape a value that is not an object is refused against.
	otherBlock struct {
		Type any `json:"type"`
	}
)

// blockShapes are the block shapes by type.
var blockShapes = map[string]reflect.Type{
	"text": reflect.TypeFor[textBlock](), "image_url": reflect.TypeFor[imageBlock](), "file": reflect.TypeFor[fileBlock](),
}

// blockJSON is every field a block may have; the decoder has left only those of its type. A
// block that is not an object is left out (nil).
type blockJSON struct {
	Type     json.RawMessage `json:"type"`
	Text     string          `json:"text"`
	ImageURL *ImageURL       `json:"image_url"`
	FileURL  string          `json:"file_url"`
}

// ShapeOf is the shape the decoder holds a block to: the one of its type. A value that is not
// an object is of the wrong type for any, and left out.
func (*blockJSON) ShapeOf(v any) reflect.Type {
	if m, ok := v.(map[string]any); ok {
		if t, ok := m["type"].(string); ok && blockShapes[t] != nil {
			return blockShapes[t]
		}
	}
	return reflect.TypeFor[otherBlock]()
}

// block is the block j holds (nil: not an object).
func (j *blockJSON) block() (Block, error) {
	if j == nil {
		return Block{}, nil
	}
	b := Block{Text: j.Text, ImageURL: j.ImageURL, FileURL: j.FileURL, object: true}
	if j.Type != nil {
		// Numbers as sent: the type is only named (a number, an object …), never used.
		dec := json.NewDecoder(bytes.NewReader(j.Type))
		dec.UseNumber()
		if err := dec.Decode(&b.typ); err != nil {
			return Block{}, err
		}
		b.Type, _ = b.typ.(string)
	}
	return b, nil
}

// MarshalJSON writes the block in the shape of its type.
func (bl Block) MarshalJSON() ([]byte, error) {
	switch bl.Type {
	case "text":
		return marshal(textBlock{Type: bl.Type, Text: bl.Text})
	case "image_url":
		return marshal(imageBlock{Type: bl.Type, ImageURL: bl.ImageURL})
	case "file":
		return marshal(fileBlock{Type: bl.Type, FileURL: bl.FileURL})
	}
	return nil, errors.New("content block of no known type")
}

// marshal is v's JSON without HTML escaping: the encoder that calls MarshalJSON escapes it or
// not, as it escapes the rest (the store measures a queued request without, jsonSize).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// first is the first byte of a JSON value, which names its type.
func first(b []byte) byte {
	if b = bytes.TrimSpace(b); len(b) == 0 {
		return 0
	}
	return b[0]
}
