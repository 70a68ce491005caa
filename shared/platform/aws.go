package platform

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// AWSConfig loads the SDK configuration. It reads only the environment (no network), so it is
// safe at init. In Lambda it is LambdaAWSConfig; elsewhere (the dev server, tests, scripts) the
// SDK's default chain (shared files, profiles, SSO), with static test credentials locally when the
// environment names none. Builds with tag nolocal (the Lambda recipe) run only in Lambda and do
// not link that chain (aws_nolocal.go). The service clients are built where they are used (core,
// the adapters), so that platform links none: meta, which reads no store, links no AWS client.
func AWSConfig(ctx context.Context, c Config) (aws.Config, error) {
	if c.InLambda {
		return LambdaAWSConfig(c), nil
	}
	return loadAWSConfig(ctx, c)
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
