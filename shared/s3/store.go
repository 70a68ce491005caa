// Package s3 is the S3 adapter: objects in one bucket by key, SDK errors out as domain kinds.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/agentorch/agentorch/shared/domain"
)

// Client is the part of the S3 API the store uses.
type Client interface {
	PutObject(ctx context.Context, in *awss3.PutObjectInput, opts ...func(*awss3.Options)) (*awss3.PutObjectOutput, error)
	GetObject(ctx context.Context, in *awss3.GetObjectInput, opts ...func(*awss3.Options)) (*awss3.GetObjectOutput, error)
	HeadObject(ctx context.Context, in *awss3.HeadObjectInput, opts ...func(*awss3.Options)) (*awss3.HeadObjectOutput, error)
	DeleteObject(ctx context.Context, in *awss3.DeleteObjectInput, opts ...func(*awss3.Options)) (*awss3.DeleteObjectOutput, error)
	CopyObject(ctx context.Context, in *awss3.CopyObjectInput, opts ...func(*awss3.Options)) (*awss3.CopyObjectOutput, error)
}

// Presigner signs requests that clients send to S3 themselves (*s3.PresignClient).
type Presigner interface {
	PresignPutObject(ctx context.Context, in *awss3.PutObjectInput, opts ...func(*awss3.PresignOptions)) (*v4.PresignedHTTPRequest, error)
}

// Store keeps objects in one bucket.
type Store struct {
	client  Client
	presign Presigner // nil when the client is not the SDK's: PresignPut then fails
	bucket  string
}

// NewStore builds a store on bucket. Given the SDK's client, it presigns with the same
// configuration (region, credentials, endpoint, path style).
func NewStore(client Client, bucket string) *Store {
	st := &Store{client: client, bucket: bucket}
	if c, ok := client.(*awss3.Client); ok {
		st.presign = awss3.NewPresignClient(c)
	}
	return st
}

// Put writes an object.
func (s *Store) Put(ctx context.Context, key string, data []byte, contentType string) error {
	_, err := s.client.PutObject(ctx, &awss3.PutObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(key), Body: bytes.NewReader(data),
		ContentType: aws.String(contentType), ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return fmt.Errorf("put %s: %w", key, translate(err))
	}
	return nil
}

// Get reads an object of at most limit bytes with its content type; a missing object is
// domain.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string, limit int64) ([]byte, string, error) {
	out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		return nil, "", fmt.Errorf("get %s: %w", key, translate(err))
	}
	defer func() { _ = out.Body.Close() }() // a response body: read or not, nothing is lost
	data, err := io.ReadAll(io.LimitReader(out.Body, limit+1))
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", key, err)
	}
	if int64(len(data)) > limit {
		return nil, "", domain.Errorf(domain.KindTooLarge, "The stored object is larger than %d bytes", limit)
	}
	return data, aws.ToString(out.ContentType), nil
}

// Open streams an object with its size, content type and ETag; a missing object is
// domain.ErrNotFound. The caller closes the body.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, domain.Object, error) {
	out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		return nil, domain.Object{}, fmt.Errorf("get %s: %w", key, translate(err))
	}
	return out.Body, domain.Object{Size: aws.ToInt64(out.ContentLength), ContentType: aws.ToString(out.ContentType), ETag: aws.ToString(out.ETag)}, nil
}

// Head says an object's size, content type and ETag; a missing object is domain.ErrNotFound.
func (s *Store) Head(ctx context.Context, key string) (domain.Object, error) {
	out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		return domain.Object{}, fmt.Errorf("head %s: %w", key, translate(err))
	}
	return domain.Object{Size: aws.ToInt64(out.ContentLength), ContentType: aws.ToString(out.ContentType), ETag: aws.ToString(out.ETag)}, nil
}

// Copy copies the object at from to to, server-side, if from's ETag is still etag
// (x-amz-copy-source-if-match): KindConflict when the bytes changed since etag was read,
// KindNotFound when from is gone. The copy keeps from's content type.
func (s *Store) Copy(ctx context.Context, from, to, etag string) error {
	_, err := s.client.CopyObject(ctx, &awss3.CopyObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(to), CopySource: aws.String(url.PathEscape(s.bucket) + "/" + escapeKey(from)),
		CopySourceIfMatch: aws.String(etag),
	})
	if err != nil {
		return fmt.Errorf("copy %s to %s: %w", from, to, translate(err))
	}
	return nil
}

// escapeKey URL-encodes each segment of a key for x-amz-copy-source.
func escapeKey(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// Delete removes an object; deleting a missing object is no error (S3 answers 204 either way).
func (s *Store) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		if domain.KindOf(translate(err)) == domain.KindNotFound {
			return nil
		}
		return fmt.Errorf("delete %s: %w", key, translate(err))
	}
	return nil
}

// PresignPut returns a URL that PUTs exactly size bytes of contentType to key until ttl has
// passed. Content-Length and Content-Type are signed headers: the client must send both with
// these values, and S3 refuses a request whose headers differ from them (SignatureDoesNotMatch).
// A size below 1 is refused: SigV4 leaves a zero Content-Length unsigned.
func (s *Store) PresignPut(ctx context.Context, key string, size int64, contentType string, ttl time.Duration) (string, error) {
	if size < 1 {
		return "", domain.Errorf(domain.KindInvalid, "An upload must have at least one byte")
	}
	if s.presign == nil {
		return "", errors.New("presign: the store was built without the SDK's S3 client")
	}
	req, err := s.presign.PresignPutObject(ctx, &awss3.PutObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(key), ContentLength: aws.Int64(size), ContentType: aws.String(contentType),
	}, awss3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("presign put %s: %w", key, translate(err))
	}
	return req.URL, nil
}

func translate(err error) error {
	var nsk *types.NoSuchKey
	var ae smithy.APIError
	switch {
	case errors.As(err, &nsk):
		return &domain.Error{Kind: domain.KindNotFound, Message: domain.ErrNotFound.Message, Err: err}
	case errors.As(err, &ae) && (ae.ErrorCode() == "NotFound" || ae.ErrorCode() == "NoSuchKey"):
		return &domain.Error{Kind: domain.KindNotFound, Message: domain.ErrNotFound.Message, Err: err}
	case errors.As(err, &ae) && ae.ErrorCode() == "PreconditionFailed":
		return &domain.Error{Kind: domain.KindConflict, Message: "The object changed meanwhile", Err: err}
	case errors.As(err, &ae) && (ae.ErrorCode() == "SlowDown" || ae.ErrorCode() == "ServiceUnavailable"):
		return &domain.Error{Kind: domain.KindOverloaded, Message: domain.ErrOverloaded.Message, Err: err}
	}
	return err
}
