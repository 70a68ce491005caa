package localstack

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Region is the region the local stack pretends to be in.
const Region = "us-east-1"

// AccessKeyID and SecretAccessKey are the stack's static key pair: the clients sign with it, and
// the S3 stand-in checks presigned URLs against it (shared/platform signs with the same pair
// locally).
const (
	AccessKeyID     = "test"
	SecretAccessKey = "test"
)

// AWSConfig is an SDK configuration for the stand-ins: static test credentials, no shared files,
// no instance metadata.
func AWSConfig() aws.Config {
	return aws.Config{
		Region:      Region,
		Credentials: credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, ""),
	}
}

// DynamoDBClient returns a DynamoDB client for the stand-in at e.DynamoDB.
func (e Endpoints) DynamoDBClient(awsCfg aws.Config) *dynamodb.Client {
	return dynamoClient(awsCfg, e.DynamoDB, false)
}

// S3Client returns a path-style S3 client for the stand-in at e.S3.
func (e Endpoints) S3Client(awsCfg aws.Config) *s3.Client { return s3Client(awsCfg, e.S3) }

// SQSClient returns an SQS client for the stand-in at e.SQS.
func (e Endpoints) SQSClient(awsCfg aws.Config) *sqs.Client { return sqsClient(awsCfg, e.SQS, false) }

func dynamoClient(awsCfg aws.Config, endpoint string, probe bool) *dynamodb.Client {
	return dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		// DynamoDB Local leaves x-amz-crc32 off its error responses.
		o.DisableValidateResponseChecksum = true
		if probe {
			o.Retryer = aws.NopRetryer{}
		}
	})
}

func sqsClient(awsCfg aws.Config, endpoint string, probe bool) *sqs.Client {
	return sqs.NewFromConfig(awsCfg, func(o *sqs.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		if probe {
			o.Retryer = aws.NopRetryer{}
		}
	})
}

func s3Client(awsCfg aws.Config, endpoint string) *s3.Client {
	return s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
	})
}

func int32p(v int32) *int32 { return &v }
