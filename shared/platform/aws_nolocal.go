//go:build nolocal

package platform

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// loadAWSConfig of the Lambda recipe (tag nolocal): its binaries run only in Lambda, or as
// Lambda under infra/lambdarun, whose credentials are in the environment, so they do not link
// the SDK's default chain (shared files, SSO, STS, IMDS: about 1 MB and 4,000 allocations at
// init in every function).
func loadAWSConfig(_ context.Context, c Config) (aws.Config, error) { return LambdaAWSConfig(c), nil }
