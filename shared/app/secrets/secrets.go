// Package secrets reads the application's secrets from Secrets Manager: the token-signing secret
// (TOKEN_SECRET_ARN) where TOKEN_SECRET is not set, and the credentials key (CREDENTIALS_KEY_ARN)
// MCP servers' headers and webhooks' signing secrets are sealed under. The mains of the
// functions that verify bearer tokens or unseal those pass Manager; the others (meta, the
// dead-letter and ingestion functions) do not link the client.
package secrets

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/agentorch/agentorch/shared/app/core"
)

// Manager gives the application the Secrets Manager reader, an option of core.MainHTTP and
// core.MainSQS. The client makes no call until a secret is read.
func Manager(a *core.App) {
	a.UseSecrets(func(ctx context.Context, arn string) ([]byte, error) {
		out, err := secretsmanager.NewFromConfig(a.AWS).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		if err != nil {
			return nil, fmt.Errorf("read secret %s: %w", arn, err)
		}
		return []byte(aws.ToString(out.SecretString)), nil
	})
}
