// Package s3local is the local stack's stand-in of S3, a test double of an outside service: an
// in-memory gofakes3 behind a thin wrapper that refuses, as S3 does, two kinds of request that
// gofakes3 lets through and that the service relies on S3 to refuse:
//
//   - A presigned request (SigV4 in the query: X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date,
//     X-Amz-Expires, X-Amz-SignedHeaders, X-Amz-Signature) whose signature does not hold for the
//     request as received (another Content-Length or Content-Type than signed, another key, an
//     edited query: 403 SignatureDoesNotMatch), whose access key is unknown (403
//     InvalidAccessKeyId), that has expired or is not valid yet (403 AccessDenied) or whose
//     parameters are malformed (400 AuthorizationQueryParametersError).
//   - A CopyObject whose x-amz-copy-source-if-match or x-amz-copy-source-if-none-match does not
//     hold for the source's current ETag (412 PreconditionFailed).
//
// Everything else goes to gofakes3 unchanged. Requests signed in the Authorization header (the
// SDK's own calls) are not checked: the service does not hand them to anyone. The ETag check and
// the copy are two steps, not one: a write between them is not seen, which is a gap no test of
// ours depends on.
package s3local

import (
	"encoding/hex"
	"encoding/xml"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Options configure a Server.
type Options struct {
	// Keys maps each access key id the stand-in knows to its secret access key.
	Keys map[string]string
	// Now is the clock presigned requests expire by; time.Now when nil.
	Now func() time.Time
}

// Server is the S3 stand-in, an http.Handler holding its buckets in memory. It is safe for
// concurrent use.
type Server struct {
	backend gofakes3.Backend
	inner   http.Handler
	keys    map[string]string
	now     func() time.Time
}

// New returns an empty stand-in.
func New(opts Options) *Server {
	backend := s3mem.New()
	s := &Server{backend: backend, inner: gofakes3.New(backend).Server(), keys: opts.Keys, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// ServeHTTP refuses what S3 would refuse and hands the rest to gofakes3.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A browser's CORS preflight carries the presigned URL's query but is never signed.
	if r.Method != http.MethodOptions && presigned(r.URL.Query()) {
		if e := s.checkPresigned(r); e != nil {
			e.write(w, r)
			return
		}
	}
	if e := s.checkCopySource(r); e != nil {
		e.write(w, r)
		return
	}
	s.inner.ServeHTTP(w, r)
}

// checkCopySource evaluates a CopyObject's ETag conditions on its source, as S3 does before it
// copies; a source that cannot be read is left to gofakes3 to report (NoSuchKey, NoSuchBucket).
func (s *Server) checkCopySource(r *http.Request) *s3Error {
	source := r.Header.Get("X-Amz-Copy-Source")
	ifMatch, ifNoneMatch := r.Header.Get("X-Amz-Copy-Source-If-Match"), r.Header.Get("X-Amz-Copy-Source-If-None-Match")
	if r.Method != http.MethodPut || source == "" || (ifMatch == "" && ifNoneMatch == "") {
		return nil
	}
	bucket, key, ok := copySource(source)
	if !ok {
		return nil
	}
	obj, err := s.backend.HeadObject(bucket, key)
	if err != nil {
		return nil
	}
	_ = obj.Contents.Close()
	etag := hex.EncodeToString(obj.Hash) // gofakes3's ETag, unquoted
	failed := func(condition string) *s3Error {
		return &s3Error{status: http.StatusPreconditionFailed, code: "PreconditionFailed",
			message: "At least one of the pre-conditions you specified did not hold", extra: [][2]string{{"Condition", condition}}}
	}
	if ifMatch != "" && !etagListHas(ifMatch, etag) {
		return failed("x-amz-copy-source-If-Match")
	}
	if ifNoneMatch != "" && etagListHas(ifNoneMatch, etag) {
		return failed("x-amz-copy-source-If-None-Match")
	}
	return nil
}

// copySource splits x-amz-copy-source ("bucket/key" or "/bucket/key", URL-encoded, perhaps with
// "?versionId=…") into bucket and key the way gofakes3 does, so that both read the same object.
func copySource(source string) (bucket, key string, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(source, "/"), "/", 2)
	decoded := false
	if len(parts) < 2 {
		d, err := url.QueryUnescape(source)
		if err != nil {
			return "", "", false
		}
		parts, decoded = strings.SplitN(strings.TrimPrefix(d, "/"), "/", 2), true
	}
	if len(parts) < 2 {
		return "", "", false
	}
	key = strings.SplitN(parts[1], "?", 2)[0]
	if !decoded {
		var err error
		if key, err = url.QueryUnescape(key); err != nil {
			return "", "", false
		}
	}
	return parts[0], key, true
}

// etagListHas reports whether a conditional header's list of ETags ("*" or `"a", "b"`) names etag.
func etagListHas(list, etag string) bool {
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		if v == "*" || strings.Trim(strings.TrimPrefix(v, "W/"), `"`) == etag {
			return true
		}
	}
	return false
}

// s3Error is an error response in S3's shape: an HTTP status and an XML <Error> body with a code,
// a message and the elements S3 adds for that code.
type s3Error struct {
	status        int
	code, message string
	extra         [][2]string // further elements, in order
}

func (e *s3Error) write(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	b.WriteString(xml.Header)
	b.WriteString("<Error>")
	for _, el := range append([][2]string{{"Code", e.code}, {"Message", e.message}}, e.extra...) {
		b.WriteString("<" + el[0] + ">")
		_ = xml.EscapeText(&b, []byte(el[1]))
		b.WriteString("</" + el[0] + ">")
	}
	b.WriteString("</Error>")
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(e.status)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(b.String()))
	}
}
