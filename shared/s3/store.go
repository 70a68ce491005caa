// Package s3 is the S3 adapter: objects in one bucket by key, SDK errors out as domain kinds.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/agentorch/agentorch/shared/domain"
)

// Client is the part of the S3 API the store uses.
type Client interface {
	PutObject(ctx context.Context, in *awss3.PutObjectInput, opts ...func(*awss3.Options)) (*awss3.PutObjectOutput, error)
	GetObject(ctx context.Context, in *awss3.GetObjectInput, opts ...func(*awss3.Options)) (*awss3.GetObjectOutput, error)
}

// Store keeps objects in one bucket.
type Store struct {
	client Client
	bucket string
}

// NewStore builds a store on bucket.
func NewStore(client Client, bucket string) *Store { return &Store{client: client, bucket: bucket} }

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
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, limit+1))
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", key, err)
	}
	if int64(len(data)) > limit {
		return nil, "", domain.Errorf(domain.KindTooLarge, "The stored object is larger than %d bytes", limit)
	}
	return data, aws.ToString(out.ContentType), nil
}

func translate(err error) error {
	var nsk *types.NoSuchKey
	var ae smithy.APIError
	switch {
	case errors.As(err, &nsk):
		return &domain.Error{Kind: domain.KindNotFound, Message: domain.ErrNotFound.Message, Err: err}
	case errors.As(err, &ae) && (ae.ErrorCode() == "NotFound" || ae.ErrorCode() == "NoSuchKey"):
		return &domain.Error{Kind: domain.KindNotFound, Message: domain.ErrNotFound.Message, Err: err}
	case errors.As(err, &ae) && (ae.ErrorCode() == "SlowDown" || ae.ErrorCode() == "ServiceUnavailable"):
		return &domain.Error{Kind: domain.KindOverloaded, Message: domain.ErrOverloaded.Message, Err: err}
	}
	return err
}
