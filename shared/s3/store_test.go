package s3_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/s3"
)

func TestMain(m *testing.M) { localstack.RunTests(m) }

// The adapter against the S3 stand-in over the real protocol (path-style, as locally configured).
func TestStore(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := s3.NewStore(s3.NewClient(env.AWS, env.Config.S3Endpoint), env.Config.Bucket)
	ctx := context.Background()
	data := []byte("\x89PNG\r\n\x1a\nnot really")
	if err := st.Put(ctx, "tmp/images/a.png", data, "image/png"); err != nil {
		t.Fatal(err)
	}
	got, ct, err := st.Get(ctx, "tmp/images/a.png", 1<<20)
	if err != nil || !bytes.Equal(got, data) || ct != "image/png" {
		t.Fatalf("get = %q %q %v", got, ct, err)
	}
	if _, _, err := st.Get(ctx, "tmp/images/missing.png", 1<<20); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("missing object: %v", err)
	}
	if _, _, err := st.Get(ctx, "tmp/images/a.png", 4); domain.KindOf(err) != domain.KindTooLarge {
		t.Errorf("object over the limit: %v", err)
	}
}

// TestPresignedUpload: a presigned PUT of the exact bytes through plain net/http stores them
// (Head sizes them, Get reads them back with their type); Content-Length and Content-Type are
// in the signature, so S3 refuses an upload of another length or type. The stand-in (gofakes3)
// checks no signatures, so the refusal is shown by recomputing the signature as S3 does.
func TestPresignedUpload(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := s3.NewStore(s3.NewClient(env.AWS, env.Config.S3Endpoint), env.Config.Bucket)
	ctx := context.Background()
	data := []byte("%PDF-1.7\nthe exact bytes of an upload\n")
	key := "files/acme/" + uuid.NewString()
	u, err := st.PresignPut(ctx, key, int64(len(data)), "application/pdf", 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	q := mustQuery(t, u)
	if got := q.Get("X-Amz-SignedHeaders"); got != "content-length;content-type;host" {
		t.Errorf("signed headers %q, want content-length;content-type;host", got)
	}
	if got := q.Get("X-Amz-Expires"); got != "900" {
		t.Errorf("expires %q, want 900", got)
	}
	creds, err := env.AWS.Credentials.Retrieve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		length int64
		ctype  string
		want   bool
	}{
		{int64(len(data)), "application/pdf", true},
		{int64(len(data)) + 1, "application/pdf", false},
		{int64(len(data)), "text/html", false},
	} {
		if got := signatureHolds(t, u, c.length, c.ctype, creds, env.AWS.Region); got != c.want {
			t.Errorf("PUT of %d bytes of %s: signature holds = %v, want %v", c.length, c.ctype, got, c.want)
		}
	}

	if _, err := st.PresignPut(ctx, key, 0, "application/pdf", time.Minute); domain.KindOf(err) != domain.KindInvalid {
		t.Errorf("presign of 0 bytes (a length SigV4 would leave unsigned): %v, want invalid", err)
	}
	if _, err := st.Head(ctx, key); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("head before the upload: %v, want not found", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/pdf")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("presigned PUT: %d %s", res.StatusCode, body)
	}
	if obj, err := st.Head(ctx, key); err != nil || obj.Size != int64(len(data)) || obj.ContentType != "application/pdf" || obj.ETag == "" {
		t.Errorf("head = %+v, %v; want %d bytes of application/pdf with an ETag", obj, err, len(data))
	}
	got, ct, err := st.Get(ctx, key, 1<<20)
	if err != nil || !bytes.Equal(got, data) || ct != "application/pdf" {
		t.Errorf("get = %q %q %v", got, ct, err)
	}
}

// TestDelete: a delete removes the object, and deleting it again (or any missing key) is no
// error.
func TestDelete(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := s3.NewStore(s3.NewClient(env.AWS, env.Config.S3Endpoint), env.Config.Bucket)
	ctx := context.Background()
	key := "files/acme/" + uuid.NewString()
	if err := st.Put(ctx, key, []byte("abc"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	if obj, err := st.Head(ctx, key); err != nil || obj.Size != 3 {
		t.Fatalf("head = %+v, %v", obj, err)
	}
	for range 2 {
		if err := st.Delete(ctx, key); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	if _, err := st.Head(ctx, key); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("head after delete: %v, want not found", err)
	}
	if _, _, err := st.Get(ctx, key, 10); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("get after delete: %v, want not found", err)
	}
}

// TestOpenAndCopy: Open streams an object with its size, type and ETag; Copy copies it
// server-side only while its ETag is the one read (a stale ETag is a conflict that copies
// nothing), and a missing source is not found.
func TestOpenAndCopy(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := s3.NewStore(s3.NewClient(env.AWS, env.Config.S3Endpoint), env.Config.Bucket)
	ctx := context.Background()
	from, to := "uploads/acme/"+uuid.NewString(), "files/acme/"+uuid.NewString()
	if err := st.Put(ctx, from, []byte("first bytes"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	body, obj, err := st.Open(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(body)
	_ = body.Close()
	if err != nil || string(got) != "first bytes" || obj.Size != 11 || obj.ContentType != "text/plain" || obj.ETag == "" {
		t.Fatalf("open = %q %+v %v", got, obj, err)
	}
	if err := st.Put(ctx, from, []byte("other bytes"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	if err := st.Copy(ctx, from, to, obj.ETag); domain.KindOf(err) != domain.KindConflict {
		t.Errorf("copy with the ETag of replaced bytes: %v, want a conflict", err)
	}
	if _, err := st.Head(ctx, to); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("a refused copy left %s: %v", to, err)
	}
	now, err := st.Head(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Copy(ctx, from, to, now.ETag); err != nil {
		t.Fatal(err)
	}
	if data, ct, err := st.Get(ctx, to, 100); err != nil || string(data) != "other bytes" || ct != "text/plain" {
		t.Errorf("copied object = %q %q %v", data, ct, err)
	}
	if err := st.Copy(ctx, "uploads/acme/"+uuid.NewString(), to, now.ETag); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("copy of a missing object: %v, want not found", err)
	}
	if _, _, err := st.Open(ctx, "uploads/acme/"+uuid.NewString()); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("open of a missing object: %v, want not found", err)
	}
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// signatureHolds recomputes a presigned URL's SigV4 signature for a PUT with the given headers,
// at the URL's own signing time, as S3 does before it accepts the request.
func signatureHolds(t *testing.T, raw string, length int64, contentType string, creds aws.Credentials, region string) bool {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	sig := q.Get("X-Amz-Signature")
	q.Del("X-Amz-Signature")
	at, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequest(http.MethodPut, u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", contentType)
	signed, _, err := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }).
		PresignHTTP(context.Background(), creds, req, "UNSIGNED-PAYLOAD", "s3", region, at)
	if err != nil {
		t.Fatal(err)
	}
	return mustQuery(t, signed).Get("X-Amz-Signature") == sig
}
