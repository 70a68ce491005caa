package platform

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// lambdaEnv gives the test the environment of a function in Lambda: only what Lambda and
// template.yaml set (every other AWS_ variable unset, no shared config files), with the
// credentials given.
func lambdaEnv(t *testing.T, creds ...string) {
	t.Helper()
	clearEnv(t)
	t.Setenv("TOKEN_SECRET_ARN", "arn:aws:secretsmanager:eu-west-1:1:secret:x")
	t.Setenv("OPENSEARCH_ENDPOINT", "search-kb.eu-west-1.es.amazonaws.com")
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "AWS_") {
			t.Setenv(name, "")
			_ = os.Unsetenv(name)
		}
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "no-credentials"))
	t.Setenv("AWS_EXECUTION_ENV", "AWS_Lambda_provided.al2023")
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "agents")
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_DEFAULT_REGION", "eu-west-1")
	for _, name := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_SQS"} {
		t.Setenv(name, "") // declared empty in template.yaml's Globals
	}
	names := []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}
	for i, v := range creds {
		t.Setenv(names[i], v)
	}
}

// TestLambdaAWSConfig: in Lambda's environment, LambdaAWSConfig is the configuration the SDK's
// default chain resolves there: the same settings, and credentials from the environment.
func TestLambdaAWSConfig(t *testing.T) {
	ctx := context.Background()
	lambdaEnv(t, "AKIDEXAMPLE", "secret", "token")
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.InLambda {
		t.Fatal("LoadConfig: not in Lambda")
	}
	want, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(cfg.Region))
	if err != nil {
		t.Fatal(err)
	}
	got, err := AWSConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// ConfigSources are the default chain's own records of where it looked; the two providers
	// and loggers are compared by what they give.
	opts := cmp.Options{cmpopts.IgnoreFields(aws.Config{}, "ConfigSources", "Credentials", "Logger"), cmpopts.EquateEmpty()}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("AWSConfig in Lambda differs from the default chain's (-want +got):\n%s", diff)
	}
	if w, g := fmt.Sprintf("%T", want.Logger), fmt.Sprintf("%T", got.Logger); w != g {
		t.Errorf("logger %s, want %s", g, w)
	}
	wantCreds, err := want.Credentials.Retrieve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gotCreds, err := got.Credentials.Retrieve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantCreds, gotCreds); diff != "" {
		t.Errorf("credentials (-want +got):\n%s", diff)
	}
	wp, wok := want.Credentials.(*aws.CredentialsCache)
	gp, gok := got.Credentials.(*aws.CredentialsCache)
	if !wok || !gok {
		t.Fatalf("providers %T and %T, want two caches", want.Credentials, got.Credentials)
	}
	if diff := cmp.Diff(wp.ProviderSources(), gp.ProviderSources()); diff != "" {
		t.Errorf("credential sources (-want +got):\n%s", diff)
	}
}

// TestLambdaAWSConfigNoCredentials: without credentials in the environment the configuration
// still builds (no call at init), and the first call fails naming the variables.
func TestLambdaAWSConfigNoCredentials(t *testing.T) {
	lambdaEnv(t)
	cfg, err := LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	got, err := AWSConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := got.Credentials.Retrieve(context.Background()); err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("Retrieve: %v, want the missing variables named", err)
	}
}
