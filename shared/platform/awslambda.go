package platform

import (
	"context"
	"errors"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"
)

// LambdaAWSConfig is the SDK configuration of a function in Lambda, built from what Lambda
// sets: the region, and the execution role's credentials in AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. It is what the SDK's config.LoadDefaultConfig
// resolves there (TestLambdaAWSConfig holds the two equal), without linking the chain of
// providers Lambda never needs. The SDK's other variables (AWS_MAX_ATTEMPTS, AWS_ENDPOINT_URL…)
// are not read: template.yaml sets none of them, and the endpoints it does set are
// Config's.
func LambdaAWSConfig(c Config) aws.Config {
	var creds aws.CredentialsProvider = noCredentials{}
	if id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"); id != "" && secret != "" {
		creds = aws.NewCredentialsCache(credentials.StaticCredentialsProvider{
			Value: aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: os.Getenv("AWS_SESSION_TOKEN"),
				AccountID: os.Getenv("AWS_ACCOUNT_ID"), Source: "EnvConfigCredentials"},
			Source: []aws.CredentialSource{aws.CredentialSourceEnvVars},
		})
	}
	return aws.Config{
		Region:                      c.Region,
		Credentials:                 creds,
		Logger:                      logging.NewStandardLogger(os.Stderr),
		DefaultsMode:                aws.DefaultsModeLegacy,
		RequestMinCompressSizeBytes: 10240,
		AccountIDEndpointMode:       aws.AccountIDEndpointModePreferred,
		RequestChecksumCalculation:  aws.RequestChecksumCalculationWhenSupported,
		ResponseChecksumValidation:  aws.ResponseChecksumValidationWhenSupported,
		RestrictFilePermissions:     aws.RestrictFilePermissionsUserReadWrite,
	}
}

// noCredentials fails each call when the environment holds no credentials, as the default
// chain would once it found none: building the configuration makes no call and never fails.
type noCredentials struct{}

func (noCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{}, errors.New("no AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)")
}
