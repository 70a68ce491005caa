package s3local_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/agentorch/agentorch/infra/s3local"
)

const (
	bucket = "media"
	region = "us-east-1"
	ttl    = 15 * time.Minute
)

// start serves a stand-in that knows the key pair test/test, on a clock offset from now by skew,
// with the bucket created, and returns its URL and a client signing with test/test.
func start(t *testing.T, skew time.Duration) (string, *s3.Client) {
	t.Helper()
	srv := httptest.NewServer(s3local.New(s3local.Options{
		Keys: map[string]string{"test": "test"},
		Now:  func() time.Time { return time.Now().Add(skew) },
	}))
	t.Cleanup(srv.Close)
	c := client(srv.URL, "test", "test")
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	return srv.URL, c
}

func client(endpoint, keyID, secret string) *s3.Client {
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(keyID, secret, "")}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
	})
}

// s3Error is the part of S3's XML error body the tests read.
type s3Error struct {
	Code    string
	Message string
}

// TestPresignedPut: a presigned PUT is stored only when it is sent as signed (same key, query,
// Content-Length and Content-Type, before expiry, with a known key pair); otherwise S3's 403
// and nothing stored.
func TestPresignedPut(t *testing.T) {
	data := []byte("%PDF-1.7 the bytes the URL was signed for")
	const mismatch = "The request signature we calculated does not match the signature you provided. Check your key and signing method."
	// put is the request a client sends with a presigned URL.
	type put struct {
		url   string
		body  []byte
		ctype string
	}
	cases := []struct {
		name          string
		key           string // default files/acme/upload
		keyID, secret string // the presigner's key pair; default test/test
		skew          time.Duration
		edit          func(p *put)
		status        int
		want          s3Error
	}{
		{name: "as signed", status: http.StatusOK},
		{name: "as signed, key needing escapes", key: "files/acme/a b+c=ü~(1)*.pdf", status: http.StatusOK},
		{name: "one byte more", edit: func(p *put) { p.body = append(p.body, '!') },
			status: http.StatusForbidden, want: s3Error{"SignatureDoesNotMatch", mismatch}},
		{name: "one byte less", edit: func(p *put) { p.body = p.body[:len(p.body)-1] },
			status: http.StatusForbidden, want: s3Error{"SignatureDoesNotMatch", mismatch}},
		{name: "another type", edit: func(p *put) { p.ctype = "text/html" },
			status: http.StatusForbidden, want: s3Error{"SignatureDoesNotMatch", mismatch}},
		{name: "no type", edit: func(p *put) { p.ctype = "" },
			status: http.StatusForbidden, want: s3Error{"SignatureDoesNotMatch", mismatch}},
		{name: "another key", edit: func(p *put) { p.url = strings.Replace(p.url, "/upload?", "/other?", 1) },
			status: http.StatusForbidden, want: s3Error{"SignatureDoesNotMatch", mismatch}},
		{name: "longer expiry in the query", edit: func(p *put) { p.url = withQuery(t, p.url, "X-Amz-Expires", "604800") },
			status: http.StatusForbidden, want: s3Error{"SignatureDoesNotMatch", mismatch}},
		{name: "signed with another secret", secret: "not-test",
			status: http.StatusForbidden, want: s3Error{"SignatureDoesNotMatch", mismatch}},
		{name: "unknown access key", keyID: "nobody",
			status: http.StatusForbidden, want: s3Error{"InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."}},
		{name: "expired", skew: ttl + time.Minute,
			status: http.StatusForbidden, want: s3Error{"AccessDenied", "Request has expired"}},
		{name: "not yet valid", skew: -time.Hour,
			status: http.StatusForbidden, want: s3Error{"AccessDenied", "Request is not yet valid"}},
		{name: "another algorithm", edit: func(p *put) { p.url = withQuery(t, p.url, "X-Amz-Algorithm", "AWS4-HMAC-SHA1") },
			status: http.StatusBadRequest, want: s3Error{"AuthorizationQueryParametersError", `X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			endpoint, c3 := start(t, c.skew)
			key, keyID, secret := or(c.key, "files/acme/upload"), or(c.keyID, "test"), or(c.secret, "test")
			signed, err := s3.NewPresignClient(client(endpoint, keyID, secret)).PresignPutObject(ctx, &s3.PutObjectInput{
				Bucket: aws.String(bucket), Key: aws.String(key),
				ContentLength: aws.Int64(int64(len(data))), ContentType: aws.String("application/pdf"),
			}, s3.WithPresignExpires(ttl))
			if err != nil {
				t.Fatal(err)
			}
			p := put{url: signed.URL, body: bytes.Clone(data), ctype: "application/pdf"}
			if c.edit != nil {
				c.edit(&p)
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodPut, p.url, bytes.NewReader(p.body))
			if err != nil {
				t.Fatal(err)
			}
			if p.ctype != "" {
				req.Header.Set("Content-Type", p.ctype)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			if res.StatusCode != c.status {
				t.Fatalf("PUT: %d %s, want %d", res.StatusCode, body, c.status)
			}

			if c.status == http.StatusOK {
				head, err := c3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
				if err != nil || aws.ToInt64(head.ContentLength) != int64(len(data)) || aws.ToString(head.ContentType) != "application/pdf" {
					t.Errorf("head %q = %+v, %v; want %d bytes of application/pdf", key, head, err, len(data))
				}
				return
			}
			var got s3Error
			if err := xml.Unmarshal(body, &got); err != nil {
				t.Fatalf("error body %s: %v", body, err)
			}
			if got != c.want {
				t.Errorf("error = %+v, want %+v", got, c.want)
			}
			for _, k := range []string{key, "files/acme/other"} {
				if _, err := c3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)}); !notFound(err) {
					t.Errorf("head %q after a refused PUT: %v, want not found", k, err)
				}
			}
		})
	}
}

// TestPresignedGet: the check is not PUT's alone; a presigned GET holds, and fails on another
// key.
func TestPresignedGet(t *testing.T) {
	ctx := context.Background()
	_, c3 := start(t, 0)
	for _, k := range []string{"a", "b"} {
		if _, err := c3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
			t.Fatal(err)
		}
	}
	signed, err := s3.NewPresignClient(c3).PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("a")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url    string
		status int
		body   string
	}{
		{signed.URL, http.StatusOK, "a"},
		{strings.Replace(signed.URL, "/a?", "/b?", 1), http.StatusForbidden, "SignatureDoesNotMatch"},
	} {
		res, err := http.Get(c.url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != c.status || !strings.Contains(string(body), c.body) {
			t.Errorf("GET %s: %d %s, want %d with %q", c.url, res.StatusCode, body, c.status, c.body)
		}
	}
}

// TestCopySourceConditions: CopyObject copies only when x-amz-copy-source-if-match names the
// source's current ETag (and if-none-match does not); otherwise 412 PreconditionFailed and no copy.
func TestCopySourceConditions(t *testing.T) {
	ctx := context.Background()
	_, c3 := start(t, 0)
	const src = "uploads/acme/f1"
	var etags []string
	for _, body := range []string{"the bytes that were checked", "the bytes swapped in later"} {
		out, err := c3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(src), Body: strings.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		etags = append(etags, aws.ToString(out.ETag))
	}
	stale, current := etags[0], etags[1]
	if stale == current || stale == "" {
		t.Fatalf("ETags %q and %q: want two different ones", stale, current)
	}
	cases := []struct {
		name              string
		source            string
		ifMatch, ifNoneMt string
		code              string // "" when the copy succeeds
	}{
		{name: "if-match stale", source: src, ifMatch: stale, code: "PreconditionFailed"},
		{name: "if-match current", source: src, ifMatch: current},
		{name: "if-match current unquoted", source: src, ifMatch: strings.Trim(current, `"`)},
		{name: "if-match one of a list", source: src, ifMatch: stale + ", " + current},
		{name: "if-none-match current", source: src, ifNoneMt: current, code: "PreconditionFailed"},
		{name: "if-none-match stale", source: src, ifNoneMt: stale},
		{name: "if-match on a missing source", source: "uploads/acme/none", ifMatch: current, code: "NoSuchKey"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := "files/acme/copy" + string(rune('a'+i))
			in := &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String(dst), CopySource: aws.String(bucket + "/" + c.source)}
			if c.ifMatch != "" {
				in.CopySourceIfMatch = aws.String(c.ifMatch)
			}
			if c.ifNoneMt != "" {
				in.CopySourceIfNoneMatch = aws.String(c.ifNoneMt)
			}
			_, err := c3.CopyObject(ctx, in)
			if c.code == "" {
				if err != nil {
					t.Fatalf("copy: %v", err)
				}
				out, err := c3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(dst)})
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(out.Body)
				_ = out.Body.Close()
				if string(got) != "the bytes swapped in later" {
					t.Errorf("copy holds %q, want the current bytes", got)
				}
				return
			}
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != c.code {
				t.Fatalf("copy: %v, want %s", err, c.code)
			}
			var re *awshttp.ResponseError
			if c.code == "PreconditionFailed" && (!errors.As(err, &re) || re.HTTPStatusCode() != http.StatusPreconditionFailed) {
				t.Errorf("copy: %v, want HTTP 412", err)
			}
			if _, err := c3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(dst)}); !notFound(err) {
				t.Errorf("head of the destination after a refused copy: %v, want not found", err)
			}
		})
	}
}

func notFound(err error) bool {
	var nf *types.NotFound
	return errors.As(err, &nf)
}

func withQuery(t *testing.T, raw, name, value string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
