package s3local

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SigV4 of a presigned request, as S3 checks it (AWS Signature Version 4, "Authenticating
// Requests: Using Query Parameters"): the canonical request is rebuilt from the request as
// received, with the values of the signed headers as sent, so that a client sending another
// Content-Length or Content-Type than the URL was signed for gets SignatureDoesNotMatch.
const (
	algorithm   = "AWS4-HMAC-SHA256"
	amzDate     = "20060102T150405Z"
	maxExpires  = 7 * 24 * 60 * 60 // seconds, S3's limit on X-Amz-Expires
	clockSkew   = 15 * time.Minute // how far in the future S3 accepts X-Amz-Date
	unsignedSHA = "UNSIGNED-PAYLOAD"
)

// presigned reports whether a request carries its signature in the query.
func presigned(q url.Values) bool {
	return q.Has("X-Amz-Algorithm") || q.Has("X-Amz-Signature") || q.Has("X-Amz-Credential")
}

// checkPresigned returns the error S3 answers a presigned request with, or nil when it holds.
func (s *Server) checkPresigned(r *http.Request) *s3Error {
	q := r.URL.Query()
	malformed := func(msg string) *s3Error {
		return &s3Error{status: http.StatusBadRequest, code: "AuthorizationQueryParametersError", message: msg}
	}
	if q.Get("X-Amz-Algorithm") != algorithm {
		return malformed(`X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"`)
	}
	at, err := time.Parse(amzDate, q.Get("X-Amz-Date"))
	if err != nil {
		return malformed(`X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`)
	}
	scope := strings.Split(q.Get("X-Amz-Credential"), "/") // key id, date, region, service, "aws4_request"
	if len(scope) != 5 || scope[0] == "" || scope[1] != at.Format("20060102") || scope[2] == "" || scope[3] != "s3" || scope[4] != "aws4_request" {
		return malformed(`Error parsing the X-Amz-Credential parameter; the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`)
	}
	expires, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || expires < 0 {
		return malformed("X-Amz-Expires should be a number")
	}
	if expires > maxExpires {
		return malformed("X-Amz-Expires must be less than a week (in seconds) that is 604800")
	}
	signedHeaders, signature := q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Signature")
	if signedHeaders == "" || signature == "" {
		return malformed("Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.")
	}

	now := s.now().UTC()
	if at.After(now.Add(clockSkew)) {
		return &s3Error{status: http.StatusForbidden, code: "AccessDenied", message: "Request is not yet valid",
			extra: [][2]string{{"X-Amz-Date", q.Get("X-Amz-Date")}, {"ServerTime", now.Format(time.RFC3339)}}}
	}
	if end := at.Add(time.Duration(expires) * time.Second); now.After(end) {
		return &s3Error{status: http.StatusForbidden, code: "AccessDenied", message: "Request has expired",
			extra: [][2]string{{"X-Amz-Expires", strconv.Itoa(expires)}, {"Expires", end.Format(time.RFC3339)}, {"ServerTime", now.Format(time.RFC3339)}}}
	}
	secret, ok := s.keys[scope[0]]
	if !ok {
		return &s3Error{status: http.StatusForbidden, code: "InvalidAccessKeyId",
			message: "The AWS Access Key Id you provided does not exist in our records.", extra: [][2]string{{"AWSAccessKeyId", scope[0]}}}
	}

	canonical := canonicalRequest(r, q, signedHeaders)
	sum := sha256.Sum256([]byte(canonical))
	stringToSign := algorithm + "\n" + q.Get("X-Amz-Date") + "\n" + strings.Join(scope[1:], "/") + "\n" + hex.EncodeToString(sum[:])
	key := []byte("AWS4" + secret)
	for _, part := range scope[1:] {
		key = hmacSHA256(key, part)
	}
	want := hex.EncodeToString(hmacSHA256(key, stringToSign))
	if !hmac.Equal([]byte(want), []byte(signature)) {
		return &s3Error{status: http.StatusForbidden, code: "SignatureDoesNotMatch",
			message: "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
			extra:   [][2]string{{"AWSAccessKeyId", scope[0]}, {"StringToSign", stringToSign}, {"SignatureProvided", signature}, {"CanonicalRequest", canonical}}}
	}
	return nil
}

// canonicalRequest is SigV4's canonical request of r: method, URI, query without the signature,
// the signed headers with the values received, their names, and S3's unsigned payload.
func canonicalRequest(r *http.Request, q url.Values, signedHeaders string) string {
	var b strings.Builder
	b.WriteString(r.Method + "\n")
	b.WriteString(canonicalURI(r.URL.EscapedPath()) + "\n")
	b.WriteString(canonicalQuery(q) + "\n")
	for _, name := range strings.Split(signedHeaders, ";") {
		b.WriteString(name + ":" + headerValue(r, name) + "\n")
	}
	b.WriteString("\n" + signedHeaders + "\n" + unsignedSHA)
	return b.String()
}

// headerValue is a signed header's value as received: Host and Content-Length come from where
// net/http keeps them, the others joined by commas, trimmed, inner runs of spaces folded.
func headerValue(r *http.Request, name string) string {
	switch name {
	case "host":
		return r.Host
	case "content-length":
		if r.ContentLength < 0 { // sent chunked: no length to match
			return ""
		}
		return strconv.FormatInt(r.ContentLength, 10)
	}
	vals := r.Header.Values(name)
	for i, v := range vals {
		vals[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(vals, ",")
}

// canonicalURI encodes each segment of the path once, as S3 does (its keys are not
// double-encoded); an escaped "/" inside a segment stays escaped.
func canonicalURI(escaped string) string {
	if escaped == "" {
		return "/"
	}
	segs := strings.Split(escaped, "/")
	for i, seg := range segs {
		if u, err := url.PathUnescape(seg); err == nil {
			seg = u
		}
		segs[i] = uriEncode(seg)
	}
	return strings.Join(segs, "/")
}

// canonicalQuery sorts the parameters other than X-Amz-Signature by name, then value, each
// URI-encoded.
func canonicalQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		if k != "X-Amz-Signature" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var pairs []string
	for _, k := range keys {
		vs := append([]string(nil), q[k]...)
		sort.Strings(vs)
		for _, v := range vs {
			pairs = append(pairs, uriEncode(k)+"="+uriEncode(v))
		}
	}
	return strings.Join(pairs, "&")
}

// uriEncode is SigV4's UriEncode: every byte but A-Z a-z 0-9 - . _ ~ percent-encoded.
func uriEncode(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}
