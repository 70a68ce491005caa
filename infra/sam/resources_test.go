package sam

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const inlineTemplate = `Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    CodeUri: functions/default/
    Layers: [!Ref Base]
    Environment:
      Variables: {A: "1", B: "2"}
Resources:
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: ./functions/worker
      Timeout: 900
      Layers: [Extra]
      Environment:
        Variables: {B: "20", C: "3"}
      Events:
        Jobs:
          Type: SQS
          Properties:
            Queue: !GetAtt Jobs.Arn
            BatchSize: 10
            MaximumBatchingWindowInSeconds: 2
            FunctionResponseTypes: [ReportBatchItemFailures]
            ScalingConfig: {MaximumConcurrency: 3}
        Paused:
          Type: SQS
          Properties: {Queue: !Ref Dead, Enabled: false}
        Nightly:
          Type: Schedule
          Properties: {Schedule: rate(1 day)}
  Web:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        List: {Type: HttpApi, Properties: {Method: get, Path: /items}}
        Any: {Type: HttpApi, Properties: {Method: any, Path: "/items/{proxy+}"}}
        FallbackItems: {Type: HttpApi, Properties: {Method: GET, Path: /things}}
        CatchAll: {Type: HttpApi}
  Jobs:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: "60"
      FifoQueue: true
      RedrivePolicy: {deadLetterTargetArn: !GetAtt Dead.Arn, maxReceiveCount: 3}
  Dead:
    Type: AWS::SQS::Queue
  Data:
    Type: AWS::DynamoDB::Table
    Properties:
      AttributeDefinitions:
        - {AttributeName: id, AttributeType: S}
        - {AttributeName: n, AttributeType: N}
      KeySchema: [{AttributeName: id, KeyType: HASH}]
      GlobalSecondaryIndexes:
        - IndexName: byN
          KeySchema: [{AttributeName: n, KeyType: HASH}]
          Projection: {ProjectionType: KEYS_ONLY}
      TimeToLiveSpecification: {AttributeName: expires, Enabled: false}
  Files:
    Type: AWS::S3::Bucket
    Properties:
      LifecycleConfiguration:
        Rules:
          - {Status: Enabled, Prefix: a/, ExpirationInDays: 7}
          - {Status: Disabled, Prefix: b/, ExpirationInDays: 1}
          - {Status: Enabled, Prefix: c/, NoncurrentVersionExpirationInDays: 3}
  Plain:
    Type: AWS::S3::Bucket
`

func parseInline(t *testing.T) *Template {
	t.Helper()
	tpl, err := Parse([]byte(inlineTemplate))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func TestFunctionsInline(t *testing.T) {
	// Events are read in name order (Any, CatchAll, FallbackItems, List). ANY routes and events
	// named Fallback… are fallbacks; an event with neither Path nor Method is the $default route.
	want := []Function{
		{
			LogicalID: "Web", CodeURI: "functions/default/", Dir: "default",
			Routes:    []Route{{"GET", "/items"}},
			Fallbacks: []Route{{"ANY", "/items/{proxy+}"}, {"ANY", DefaultRoute}, {"GET", "/things"}},
		},
		{
			LogicalID: "Worker", CodeURI: "./functions/worker", Dir: "worker", Timeout: 900,
			Queues: []string{"Jobs", "Dead"},
			SQSEvents: []SQSEvent{
				{Name: "Jobs", Queue: "Jobs", BatchSize: 10, MaxBatchingWindow: 2, ReportBatchItemFailures: true, MaximumConcurrency: 3},
				{Name: "Paused", Queue: "Dead", Disabled: true},
			},
			Schedules: []string{"rate(1 day)"},
		},
	}
	if diff := cmp.Diff(want, parseInline(t).Functions()); diff != "" {
		t.Errorf("Functions (-want +got):\n%s", diff)
	}
}

func TestPropertiesMergesGlobals(t *testing.T) {
	got := parseInline(t).Properties("Worker")
	want := map[string]any{
		"CodeUri":     "./functions/worker",
		"Layers":      []any{map[string]any{"Ref": "Base"}, "Extra"},
		"Environment": map[string]any{"Variables": map[string]any{"A": "1", "B": "20", "C": "3"}},
	}
	for k, w := range want {
		if diff := cmp.Diff(w, got[k]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", k, diff)
		}
	}
	if got := parseInline(t).Properties("Nope"); got != nil {
		t.Errorf("Properties of an unknown id = %v, want nil", got)
	}
	// Non-serverless resources take no globals.
	if diff := cmp.Diff(map[string]any{}, parseInline(t).Properties("Dead")); diff != "" {
		t.Errorf("Properties(Dead) (-want +got):\n%s", diff)
	}
}

func TestTablesInline(t *testing.T) {
	want := []Table{{
		LogicalID: "Data", HashKey: "id",
		Attributes: map[string]string{"id": "S", "n": "N"},
		GSIs:       []Index{{Name: "byN", HashKey: "n", Projection: "KEYS_ONLY"}},
		// TTL is disabled, so no attribute.
	}}
	if diff := cmp.Diff(want, parseInline(t).Tables()); diff != "" {
		t.Errorf("Tables (-want +got):\n%s", diff)
	}
}

func TestQueuesInline(t *testing.T) {
	want := []Queue{
		{LogicalID: "Dead"},
		{LogicalID: "Jobs", VisibilityTimeout: 60, DeadLetterTarget: "Dead", MaxReceiveCount: 3, FIFO: true},
	}
	if diff := cmp.Diff(want, parseInline(t).Queues()); diff != "" {
		t.Errorf("Queues (-want +got):\n%s", diff)
	}
}

func TestBucketsInline(t *testing.T) {
	want := []Bucket{
		{LogicalID: "Files", ExpirePrefixes: map[string]int{"a/": 7}},
		{LogicalID: "Plain", ExpirePrefixes: map[string]int{}},
	}
	if diff := cmp.Diff(want, parseInline(t).Buckets()); diff != "" {
		t.Errorf("Buckets (-want +got):\n%s", diff)
	}
}

func TestFunctionDirFromLogicalID(t *testing.T) {
	tmpl, err := Parse([]byte("Resources:\n  BillingFunction:\n    Type: AWS::Serverless::Function\n    Properties:\n      CodeUri: .\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := tmpl.Functions()[0].Dir; got != "billing" {
		t.Errorf("Dir = %q, want billing", got)
	}
}

// A FunctionUrlConfig is read with its auth type and invoke mode (BUFFERED when unset), and
// names the URL resource SAM generates.
func TestFunctionURLInline(t *testing.T) {
	tmpl, err := Parse([]byte(`Resources:
  StreamFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: .
      FunctionUrlConfig: {AuthType: NONE, InvokeMode: RESPONSE_STREAM}
  PlainFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: .
      FunctionUrlConfig: {AuthType: AWS_IAM}
  BareFunction:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: .}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*FunctionURL{}
	streams := map[string]bool{}
	for _, f := range tmpl.Functions() {
		got[f.LogicalID], streams[f.LogicalID] = f.URL, f.Streams()
	}
	want := map[string]*FunctionURL{
		"StreamFunction": {AuthType: "NONE", InvokeMode: InvokeModeStream},
		"PlainFunction":  {AuthType: "AWS_IAM", InvokeMode: "BUFFERED"},
		"BareFunction":   nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("URL (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"StreamFunction": true, "PlainFunction": false, "BareFunction": false}, streams); diff != "" {
		t.Errorf("Streams (-want +got):\n%s", diff)
	}
	if id := (Function{LogicalID: "StreamFunction"}).URLLogicalID(); id != "StreamFunctionUrl" {
		t.Errorf("URLLogicalID = %q", id)
	}
}
