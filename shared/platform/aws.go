package platform

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// AWSConfig loads the SDK configuration. It reads only the environment (no network), so it is
// safe at init. In Lambda it is LambdaAWSConfig; elsewhere (the dev server, tests, scripts) the
// SDK's default chain (shared files, profiles, SSO), with static test credentials locally when the
// environment names none. Builds with tag nolocal (the Lambda recipe) run only in Lambda and do
// not link that chain (aws_nolocal.go).
func AWSConfig(ctx context.Context, c Config) (aws.Config, error) {
	if c.InLambda {
		return LambdaAWSConfig(c), nil
	}
	return loadAWSConfig(ctx, c)
}

// DynamoClient builds the DynamoDB client, pointed at the local endpoint when one is configured.
func DynamoClient(cfg aws.Config, c Config, extra ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		if c.DynamoEndpoint != "" {
			o.BaseEndpoint = aws.String(c.DynamoEndpoint)
		}
		// DynamoDB Local omits x-amz-crc32 on errors; the check adds nothing on a local socket.
		o.DisableValidateResponseChecksum = !c.InLambda
	}}, extra...)...)
}

// S3Client builds the S3 client: path-style addressing at the local endpoint when one is set.
func S3Client(cfg aws.Config, c Config) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if c.S3Endpoint != "" {
			o.BaseEndpoint = aws.String(c.S3Endpoint)
			o.UsePathStyle = true
		}
	})
}

// HasAWSCredentials reports whether the environment names real AWS credentials (keys, a profile,
// or a container or web-identity provider), as opposed to the local stack's static test ones.
func HasAWSCredentials() bool {
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"} {
		if os.Getenv(v) != "" && os.Getenv(v) != "test" {
			return true
		}
	}
	return false
}
