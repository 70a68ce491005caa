package localstack_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
)

func TestMain(m *testing.M) { localstack.RunTests(m) }

func TestTableFromTemplate(t *testing.T) {
	env := localstack.NewTestEnv(t)
	ctx := context.Background()
	name := env.Resources.Tables["AppTable"]
	if name == "" || name != env.Config.Table {
		t.Fatalf("table %q, config table %q", name, env.Config.Table)
	}
	out, err := env.DynamoDB().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	td := out.Table
	if got := td.BillingModeSummary; got == nil || got.BillingMode != dbtypes.BillingModePayPerRequest {
		t.Errorf("billing mode = %+v, want PAY_PER_REQUEST", got)
	}
	if diff := cmp.Diff([]string{"pk HASH", "sk RANGE"}, keys(td.KeySchema)); diff != "" {
		t.Errorf("table key schema (-want +got):\n%s", diff)
	}
	if len(td.GlobalSecondaryIndexes) != 1 {
		t.Fatalf("got %d GSIs, want 1", len(td.GlobalSecondaryIndexes))
	}
	gsi := td.GlobalSecondaryIndexes[0]
	if got := aws.ToString(gsi.IndexName); got != "gsi1" {
		t.Errorf("GSI name = %q, want gsi1", got)
	}
	if diff := cmp.Diff([]string{"gsi1pk HASH", "gsi1sk RANGE"}, keys(gsi.KeySchema)); diff != "" {
		t.Errorf("GSI key schema (-want +got):\n%s", diff)
	}
	if got := gsi.Projection.ProjectionType; got != dbtypes.ProjectionTypeAll {
		t.Errorf("GSI projection = %s, want ALL", got)
	}
	ttl, err := env.DynamoDB().DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if d := ttl.TimeToLiveDescription; d.TimeToLiveStatus != dbtypes.TimeToLiveStatusEnabled || aws.ToString(d.AttributeName) != "ttl" {
		t.Errorf("TTL = %s on %q, want ENABLED on ttl", d.TimeToLiveStatus, aws.ToString(d.AttributeName))
	}
}

func keys(ks []dbtypes.KeySchemaElement) []string {
	var out []string
	for _, k := range ks {
		out = append(out, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	return out
}

func TestQueuesFromTemplate(t *testing.T) {
	env := localstack.NewTestEnv(t)
	ctx := context.Background()
	q, dlq := env.Resources.Queues["IngestQueue"], env.Resources.Queues["IngestDeadLetterQueue"]
	if q == "" || dlq == "" || q != env.Config.IngestQueueURL {
		t.Fatalf("queues %v, config queue %q", env.Resources.Queues, env.Config.IngestQueueURL)
	}
	attrs := func(url string) map[string]string {
		out, err := env.SQS().GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
		})
		if err != nil {
			t.Fatal(err)
		}
		return out.Attributes
	}
	qa, da := attrs(q), attrs(dlq)
	if got := qa["VisibilityTimeout"]; got != "960" { // template.yaml: longer than IngestFunction's 900 s
		t.Errorf("VisibilityTimeout = %q, want 960", got)
	}
	var policy struct {
		DeadLetterTargetArn string          `json:"deadLetterTargetArn"`
		MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(qa["RedrivePolicy"]), &policy); err != nil {
		t.Fatalf("RedrivePolicy %q: %v", qa["RedrivePolicy"], err)
	}
	if policy.DeadLetterTargetArn == "" || policy.DeadLetterTargetArn != da["QueueArn"] {
		t.Errorf("redrive target = %q, want the DLQ's ARN %q", policy.DeadLetterTargetArn, da["QueueArn"])
	}
	if got := strings.Trim(string(policy.MaxReceiveCount), `"`); got != "3" {
		t.Errorf("maxReceiveCount = %s, want 3", got)
	}
}

func TestBucketFromTemplate(t *testing.T) {
	env := localstack.NewTestEnv(t)
	ctx := context.Background()
	b := env.Resources.Buckets["MediaBucket"]
	if b == "" || b != strings.ToLower(b) || b != env.Config.Bucket {
		t.Fatalf("bucket %q, config bucket %q", b, env.Config.Bucket)
	}
	want := "hello from " + b
	if _, err := env.S3().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("tmp/x.txt"), Body: strings.NewReader(want)}); err != nil {
		t.Fatal(err)
	}
	out, err := env.S3().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("tmp/x.txt")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	_ = out.Body.Close()
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestS3StandInChecksSignatures: the stack's S3 is infra/s3local, not bare gofakes3: a presigned
// PUT of another type than signed is refused, and a copy whose source changed since its ETag
// was read is refused (infra/s3local's own tests cover the other cases).
func TestS3StandInChecksSignatures(t *testing.T) {
	env := localstack.NewTestEnv(t)
	ctx := context.Background()
	b := env.Config.Bucket
	data := "signed bytes"
	signed, err := s3.NewPresignClient(env.S3()).PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(b), Key: aws.String("tmp/presigned.txt"),
		ContentLength: aws.Int64(int64(len(data))), ContentType: aws.String("text/plain"),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ctype  string
		status int
	}{{"text/html", http.StatusForbidden}, {"text/plain", http.StatusOK}} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, signed.URL, strings.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", c.ctype)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != c.status {
			t.Errorf("presigned PUT of %s: %d %s, want %d", c.ctype, res.StatusCode, body, c.status)
		}
	}

	head, err := env.S3().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("tmp/presigned.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.S3().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("tmp/presigned.txt"), Body: strings.NewReader("swapped")}); err != nil {
		t.Fatal(err)
	}
	_, err = env.S3().CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("tmp/copy.txt"),
		CopySource: aws.String(b + "/tmp/presigned.txt"), CopySourceIfMatch: head.ETag})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "PreconditionFailed" {
		t.Errorf("copy with the ETag from before the swap: %v, want PreconditionFailed", err)
	}
}

func TestOpenSearchStandIn(t *testing.T) {
	env := localstack.NewTestEnv(t)
	ctx := context.Background()
	if !strings.HasPrefix(env.Endpoints.OpenSearch, "http://127.0.0.1:") {
		t.Fatalf("OpenSearch endpoint %q, want a loopback URL", env.Endpoints.OpenSearch)
	}
	c := env.OpenSearch(t)
	info, err := c.Info(ctx, nil)
	if err != nil || info.Version.Number == "" {
		t.Fatalf("GET / = %+v, %v", info, err)
	}
	name := env.IndexName("kb")
	if name == "kb" || name != strings.ToLower(name) {
		t.Fatalf("IndexName(kb) = %q, want a unique lowercase name", name)
	}
	if _, err := c.Indices.Create(ctx, opensearchapi.IndicesCreateReq{Index: name,
		Body: strings.NewReader(`{"settings":{"index.knn":true},"mappings":{"properties":{"v":{"type":"knn_vector","dimension":2}}}}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Index(ctx, opensearchapi.IndexReq{Index: name, DocumentID: "1", Body: strings.NewReader(`{"v":[1,0]}`),
		Params: opensearchapi.IndexParams{Refresh: "true"}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Search(ctx, &opensearchapi.SearchReq{Indices: []string{name}, Body: strings.NewReader(`{"query":{"knn":{"v":{"vector":[1,0],"k":1}}}}`)})
	if err != nil || len(res.Hits.Hits) != 1 || res.Hits.Hits[0].Score != 1 {
		t.Fatalf("knn search = %+v, %v", res, err)
	}
}

// The test env's OpenSearch indices go with it.
func TestOpenSearchIndicesDeletedWithEnv(t *testing.T) {
	var name string
	var ep localstack.Endpoints
	t.Run("env", func(t *testing.T) {
		env := localstack.NewTestEnv(t)
		name, ep = env.IndexName("chunks"), env.Endpoints
		if _, err := env.OpenSearch(t).Indices.Create(context.Background(), opensearchapi.IndicesCreateReq{Index: name}); err != nil {
			t.Fatal(err)
		}
	})
	res, err := http.Head(ep.OpenSearch + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("HEAD /%s after the env ended = %d, want 404", name, res.StatusCode)
	}
}

// CreateResources is run by the dev server on every start against a stack that may already hold
// the resources: a second run must succeed and give the same names.
func TestCreateResourcesIdempotent(t *testing.T) {
	env := localstack.NewTestEnv(t)
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := sam.Load(root + "/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	suffix := strings.TrimPrefix(env.Resources.Tables["AppTable"], "AppTable")
	again, err := localstack.CreateResources(context.Background(), env.AWS, env.Endpoints, tmpl, suffix)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(env.Resources, again); diff != "" {
		t.Errorf("second run (-first +second):\n%s", diff)
	}
}

func TestStartBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	busy := l.Addr().(*net.TCPAddr).Port
	st, err := localstack.Start(context.Background(), localstack.Options{DynamoPort: busy})
	if err == nil {
		_ = st.Stop()
		t.Fatal("Start succeeded on a busy port")
	}
	if !strings.Contains(err.Error(), strconv.Itoa(busy)) {
		t.Errorf("error %q does not name port %d", err, busy)
	}
}

// make dev serves the OpenSearch stand-in on a fixed port: Start must use the one it is given.
func TestStartOpenSearchPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	busy := l.Addr().(*net.TCPAddr).Port
	st, err := localstack.Start(context.Background(), localstack.Options{OpenSearchPort: busy})
	if err == nil {
		_ = st.Stop()
		t.Fatal("Start succeeded with the OpenSearch port taken")
	}
	if !strings.Contains(err.Error(), "OpenSearch") || !strings.Contains(err.Error(), strconv.Itoa(busy)) {
		t.Errorf("error %q does not name the OpenSearch port %d", err, busy)
	}
	_ = l.Close()
	st, err = localstack.Start(context.Background(), localstack.Options{OpenSearchPort: busy})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Stop() }()
	if got, want := st.Endpoints().OpenSearch, "http://127.0.0.1:"+strconv.Itoa(busy); got != want {
		t.Errorf("OpenSearch endpoint = %s, want %s", got, want)
	}
	res, err := http.Get(st.Endpoints().OpenSearch + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET / = %d", res.StatusCode)
	}
}

// A stand-in that dies on start is reported at once, with what it printed.
func TestStartChildExits(t *testing.T) {
	dir := t.TempDir()
	fake := "#!/bin/sh\necho 'fake java: no such luck' >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, "java"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	start := time.Now()
	st, err := localstack.Start(context.Background(), localstack.Options{})
	if err == nil {
		_ = st.Stop()
		t.Fatal("Start succeeded with a java that exits")
	}
	if !strings.Contains(err.Error(), "DynamoDB Local exited") || !strings.Contains(err.Error(), "fake java: no such luck") {
		t.Errorf("error %q does not say DynamoDB Local exited and show its output", err)
	}
	if d := time.Since(start); d >= localstack.ReadyTimeout {
		t.Errorf("took %s to notice: it waited for the ready timeout (%s) instead of seeing the exit", d, localstack.ReadyTimeout)
	}
}
