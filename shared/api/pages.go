package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
)

// Paging of the list endpoints (agents, versions, sessions, events): limit and offset in the
// query, the array itself in the body (bare where the contract says so), and the next page in a
// Link header.
const (
	DefaultListLimit = 50
	MaxListLimit     = 100
	// MaxOffset bounds offset parameters; a larger one answers 400.
	MaxOffset = 1 << 30
	// MaxPageBytes bounds the items of one page as a Lambda response carries them: the body
	// travels as a JSON string there, where every quote and backslash takes two bytes. Lambda
	// refuses responses over 6 MB (6,291,456 bytes); the rest is left for the envelope around
	// the items, the headers and the proxy response.
	MaxPageBytes = 5 << 20
)

// page is the requested window of a list.
type page struct {
	offset, limit int
}

// pageParams reads limit (1 to MaxListLimit, default DefaultListLimit) and offset (default 0).
func pageParams(r *http.Request) (page, error) {
	return pageWithin(r, DefaultListLimit, MaxListLimit, MaxOffset)
}

// pageWithin reads limit (1 to maxLimit, default def) and offset (0 to maxOffset, default 0).
func pageWithin(r *http.Request, def, maxLimit, maxOffset int) (page, error) {
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit", def, 1, maxLimit)
	if err != nil {
		return page{}, err
	}
	offset, err := intParam(q.Get("offset"), "offset", 0, 0, maxOffset)
	if err != nil {
		return page{}, err
	}
	return page{offset: offset, limit: limit}, nil
}

// fitPage encodes items in order while they fit in MaxPageBytes (the first always does: a
// stored record is at most 400 KB); fewer results than items means the page was cut for size.
func fitPage[T any](items []T) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(items))
	used := 0
	for _, it := range items {
		b, err := encodeJSON(it)
		if err != nil {
			return nil, err
		}
		n := lambdaBytes(b) + 1 // and a comma
		if len(out) > 0 && used+n > MaxPageBytes {
			break
		}
		used += n
		out = append(out, b)
	}
	return out, nil
}

// writeList answers 200 with a page of a list as a bare JSON array. more tells whether items
// follow the given ones; when they do, or when the page had to be cut to MaxPageBytes, a Link
// header names the next page.
func writeList[T any](w http.ResponseWriter, r *http.Request, pg page, items []T, more bool) error {
	enc, err := fitPage(items)
	if err != nil {
		return err
	}
	if more || len(enc) < len(items) {
		setNext(w, r, pg.offset+len(enc), pg.limit)
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, e := range enc {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteString("]\n")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes()) // the client went away; nothing left to tell it
	return nil
}

// setNext sets the Link header to the next page: this request with offset and limit replaced.
func setNext(w http.ResponseWriter, r *http.Request, offset, limit int) {
	q := r.URL.Query()
	q.Set("limit", strconv.Itoa(limit))
	q.Set("offset", strconv.Itoa(offset))
	next := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	w.Header().Set("Link", "<"+next.String()+`>; rel="next"`)
}

// encodeJSON encodes v as writeJSON does, without the trailing newline.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// lambdaBytes is the size b takes inside a Lambda response, where the body is a JSON string
// (encoded by aws-lambda-go without HTML escaping).
func lambdaBytes(b []byte) int {
	var c byteCounter
	enc := json.NewEncoder(&c)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(string(b)) // a string always encodes
	return int(c) - 3         // the quotes around it and the newline
}

type byteCounter int

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}
