package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/agentorch/agentorch/shared/auth"
)

// secretsManagerSource reads the token-signing secret from Secrets Manager on first use. It
// makes the one GetSecretValue call over the service's JSON protocol with the SDK's SigV4 signer
// rather than through the SDK's secretsmanager client, whose package (schemas and endpoint rules,
// built at start) added 0.26 MB to every function for this single call.
func secretsManagerSource(awsCfg aws.Config, arn string) auth.SecretSource {
	endpoint := secretsManagerEndpoint(awsCfg.Region)
	return func(ctx context.Context) ([]byte, error) {
		return getSecretValue(ctx, awsCfg, endpoint, arn)
	}
}

// secretsManagerEndpoint is the service's regional endpoint (aws partition, or aws-cn).
func secretsManagerEndpoint(region string) string {
	if strings.HasPrefix(region, "cn-") {
		return "https://secretsmanager." + region + ".amazonaws.com.cn"
	}
	return "https://secretsmanager." + region + ".amazonaws.com"
}

// secretAttempts bounds the tries of one read: throttling, a 5xx or a failed connection is
// tried again, as the SDK's standard retryer would.
const secretAttempts = 3

func getSecretValue(ctx context.Context, awsCfg aws.Config, endpoint, arn string) ([]byte, error) {
	body, err := json.Marshal(map[string]string{"SecretId": arn})
	if err != nil {
		return nil, err
	}
	var last error
	for attempt := range secretAttempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("read secret %s: %w (after %v)", arn, ctx.Err(), last)
			case <-time.After(time.Duration(100<<attempt) * time.Millisecond):
			}
		}
		secret, retry, err := getSecretOnce(ctx, awsCfg, endpoint, body)
		if err == nil {
			return secret, nil
		}
		last = fmt.Errorf("read secret %s: %w", arn, err)
		if !retry {
			break
		}
	}
	return nil, last
}

func getSecretOnce(ctx context.Context, awsCfg aws.Config, endpoint string, body []byte) (secret []byte, retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(endpoint, "/")+"/", bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "secretsmanager.GetSecretValue")
	if awsCfg.Credentials == nil {
		return nil, false, fmt.Errorf("no AWS credentials")
	}
	creds, err := awsCfg.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, true, fmt.Errorf("credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "secretsmanager", awsCfg.Region, time.Now()); err != nil {
		return nil, false, fmt.Errorf("sign: %w", err)
	}
	var client aws.HTTPClient = http.DefaultClient
	if awsCfg.HTTPClient != nil {
		client = awsCfg.HTTPClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20)) // a secret holds at most 64 KiB
	if err != nil {
		return nil, true, err
	}
	var out struct {
		SecretString string
		Type         string `json:"__type"`
		Message      string `json:"message"`
		MessageCap   string `json:"Message"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, resp.StatusCode >= 500, fmt.Errorf("status %d, body not JSON: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		kind := out.Type[strings.LastIndex(out.Type, "#")+1:]
		retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || kind == "ThrottlingException"
		return nil, retry, fmt.Errorf("status %d %s: %s%s", resp.StatusCode, kind, out.Message, out.MessageCap)
	}
	if out.SecretString == "" {
		return nil, false, fmt.Errorf("the secret has no SecretString")
	}
	return []byte(out.SecretString), false, nil
}
