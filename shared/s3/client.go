package s3

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
)

// NewClient builds the S3 client: path-style addressing at endpoint when one is set (the local
// stand-in), the SDK's own resolution otherwise.
func NewClient(cfg aws.Config, endpoint string) *awss3.Client {
	return awss3.NewFromConfig(cfg, func(o *awss3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
	})
}
