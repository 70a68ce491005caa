package app

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// The token-signing secret is read with one signed GetSecretValue call, as the SDK's client made
// it; an error of the service is reported with its type, throttling is tried again.
func TestGetSecretValue(t *testing.T) {
	const arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:token-AbCdEf"
	tests := []struct {
		name      string
		status    []int // per attempt; the last repeats
		body      string
		want      string
		wantErr   string
		wantCalls int32
	}{
		{name: "secret", status: []int{200}, body: `{"ARN":"x","Name":"token","SecretString":"s3cret","VersionId":"v"}`, want: "s3cret", wantCalls: 1},
		{name: "not found", status: []int{400}, body: `{"__type":"com.amazonaws.secretsmanager#ResourceNotFoundException","Message":"Secrets Manager can't find the specified secret."}`,
			wantErr: "status 400 ResourceNotFoundException: Secrets Manager can't find the specified secret.", wantCalls: 1},
		{name: "throttled then served", status: []int{400, 200}, body: `{"__type":"ThrottlingException","message":"Rate exceeded","SecretString":"s3cret"}`, want: "s3cret", wantCalls: 2},
		{name: "server errors", status: []int{500}, body: `{"__type":"InternalServiceError","message":"boom"}`, wantErr: "status 500 InternalServiceError: boom", wantCalls: secretAttempts},
		{name: "binary secret", status: []int{200}, body: `{"SecretBinary":"AAE="}`, wantErr: "no SecretString", wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1))
				b, _ := io.ReadAll(r.Body)
				var in map[string]string
				if err := json.Unmarshal(b, &in); err != nil || in["SecretId"] != arn || len(in) != 1 {
					t.Errorf("body %s, want {\"SecretId\":%q}", b, arn)
				}
				auth := r.Header.Get("Authorization")
				if r.Method != http.MethodPost || r.URL.Path != "/" ||
					r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" ||
					r.Header.Get("Content-Type") != "application/x-amz-json-1.1" ||
					!strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKID/") ||
					!strings.Contains(auth, "/eu-west-1/secretsmanager/aws4_request") ||
					r.Header.Get("X-Amz-Security-Token") != "session" || r.Header.Get("X-Amz-Date") == "" {
					t.Errorf("request %s %s, headers %v: not a signed GetSecretValue", r.Method, r.URL.Path, r.Header)
				}
				st := tt.status[min(n, len(tt.status))-1]
				w.WriteHeader(st)
				if st == 200 && strings.Contains(tt.body, "__type") {
					_, _ = io.WriteString(w, `{"SecretString":"s3cret"}`)
					return
				}
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			cfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "session")}
			got, err := getSecretValue(t.Context(), cfg, srv.URL, arn)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err %v, want one saying %q", err, tt.wantErr)
			case tt.wantErr == "" && (err != nil || string(got) != tt.want):
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
			if calls.Load() != tt.wantCalls {
				t.Errorf("%d calls, want %d", calls.Load(), tt.wantCalls)
			}
		})
	}
	if got := secretsManagerEndpoint("cn-north-1"); got != "https://secretsmanager.cn-north-1.amazonaws.com.cn" {
		t.Errorf("cn-north-1 endpoint %s", got)
	}
	if got := secretsManagerEndpoint("eu-west-1"); got != "https://secretsmanager.eu-west-1.amazonaws.com" {
		t.Errorf("eu-west-1 endpoint %s", got)
	}
}
