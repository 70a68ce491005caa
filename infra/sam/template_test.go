package sam

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// repoTemplate loads the project's template.yaml, found by walking up to go.mod.
func repoTemplate(t *testing.T) *Template {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	tpl, err := Load(filepath.Join(dir, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func ref(name string) map[string]any { return map[string]any{"Ref": name} }

// TestTemplateFunctions pins the template's functions: directories, timeouts and queue events.
// Their routes are not listed here: shared/app's TestRoutesMatchGo holds them equal to the Go
// router's, shared/api's TestOpenAPIRoutes holds those equal to the OpenAPI document, and the
// events replay holds one sample event per route, so a new route is written in the handler, the
// template and the document, and checked, without a fourth copy here (TestFunctionsInline tests
// how the parser reads routes).
func TestTemplateFunctions(t *testing.T) {
	want := []Function{
		{LogicalID: "AgentsFunction", CodeURI: ".", Dir: "agents", Timeout: 29},
		{LogicalID: "AuthFunction", CodeURI: ".", Dir: "auth", Timeout: 29},
		{LogicalID: "CollectionsFunction", CodeURI: ".", Dir: "collections", Timeout: 29},
		{
			LogicalID: "ExecutionFailedFunction", CodeURI: ".", Dir: "executionfailed", Timeout: 60, Queues: []string{"ExecutionDeadLetterQueue"},
			SQSEvents: []SQSEvent{{Name: "DeadExecutionJobs", Queue: "ExecutionDeadLetterQueue", BatchSize: 1, ReportBatchItemFailures: true}},
		},
		{LogicalID: "FilesFunction", CodeURI: ".", Dir: "files", Timeout: 29},
		{LogicalID: "ImagesFunction", CodeURI: ".", Dir: "images", Timeout: 29},
		{
			LogicalID: "IngestFailedFunction", CodeURI: ".", Dir: "ingestfailed", Timeout: 60, Queues: []string{"IngestDeadLetterQueue"},
			SQSEvents: []SQSEvent{{Name: "DeadIngestJobs", Queue: "IngestDeadLetterQueue", BatchSize: 1, ReportBatchItemFailures: true}},
		},
		{
			LogicalID: "IngestFunction", CodeURI: ".", Dir: "ingest", Timeout: 900, Queues: []string{"IngestQueue"},
			SQSEvents: []SQSEvent{{Name: "IngestJobs", Queue: "IngestQueue", BatchSize: 5, MaxBatchingWindow: 1,
				ReportBatchItemFailures: true, MaximumConcurrency: 10}},
		},
		{LogicalID: "KnowledgeFunction", CodeURI: ".", Dir: "knowledge", Timeout: 29},
		{LogicalID: "MCPServersFunction", CodeURI: ".", Dir: "mcpservers", Timeout: 29},
		{
			LogicalID: "MemoryExtractFunction", CodeURI: ".", Dir: "memoryextract", Timeout: 120, Queues: []string{"MemoryQueue"},
			SQSEvents: []SQSEvent{{Name: "MemoryJobs", Queue: "MemoryQueue", BatchSize: 1, ReportBatchItemFailures: true, MaximumConcurrency: 5}},
		},
		{LogicalID: "MemoryFunction", CodeURI: ".", Dir: "memory", Timeout: 29},
		{LogicalID: "MetaFunction", CodeURI: ".", Dir: "meta", Timeout: 29},
		{LogicalID: "RuntimeFunction", CodeURI: ".", Dir: "runtime", Timeout: 29},
		{LogicalID: "SessionsFunction", CodeURI: ".", Dir: "sessions", Timeout: 29},
		{LogicalID: "StreamFunction", CodeURI: ".", Dir: "stream", Timeout: 300, URL: &FunctionURL{AuthType: "NONE", InvokeMode: InvokeModeStream}},
		{LogicalID: "WatchdogFunction", CodeURI: ".", Dir: "watchdog", Timeout: 60, Schedules: []string{"rate(1 minute)"}},
		{
			LogicalID: "WebhookDeliveryFunction", CodeURI: ".", Dir: "webhookdelivery", Timeout: 60, Queues: []string{"WebhookQueue"},
			SQSEvents: []SQSEvent{{Name: "WebhookJobs", Queue: "WebhookQueue", BatchSize: 1, ReportBatchItemFailures: true}},
		},
		{LogicalID: "WebhooksFunction", CodeURI: ".", Dir: "webhooks", Timeout: 29},
		{
			LogicalID: "WorkerFunction", CodeURI: ".", Dir: "worker", Timeout: 900, Queues: []string{"ExecutionQueue"},
			SQSEvents: []SQSEvent{{Name: "Executions", Queue: "ExecutionQueue", BatchSize: 1, ReportBatchItemFailures: true}},
		},
	}
	var got []Function
	for _, f := range repoTemplate(t).Functions() {
		f.Routes, f.Fallbacks = nil, nil
		got = append(got, f)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Functions (-want +got):\n%s", diff)
	}
}

func TestTemplateFunctionSettings(t *testing.T) {
	tpl := repoTemplate(t)
	wantEnv := map[string]any{
		"TABLE_NAME":          ref("AppTable"),
		"BUCKET_NAME":         ref("MediaBucket"),
		"INGEST_QUEUE_URL":    ref("IngestQueue"),
		"TOKEN_SECRET_ARN":    ref("TokenSigningSecret"),
		"CREDENTIALS_KEY_ARN": ref("CredentialsKey"),
		"LOG_FORMAT":          "json",
		"OPENSEARCH_ENDPOINT": map[string]any{"Fn::GetAtt": []any{"VectorDomain", "DomainEndpoint"}},
		"EXECUTION_QUEUE_URL": ref("ExecutionQueue"),
		"WEBHOOK_QUEUE_URL":   ref("WebhookQueue"),
		"MODEL_PROVIDER":      "bedrock",
		"EMBEDDING_PROVIDER":  "bedrock",
		"BEDROCK_MODEL_ID":    ref("BedrockModelId"),
		"RERANK_MODEL_ID":     ref("RerankModelId"),
		"RERANK_REGION":       ref("RerankRegion"),
		"OPENAI_BASE_URL":     ref("OpenAIBaseURL"),
		"OPENAI_MODEL":        ref("OpenAIModel"),
		"PUBLIC_BASE_URL":     ref("PublicBaseURL"),
		// Empty on AWS; declared for sam local (infra/sam/local-env.json).
		"AWS_ENDPOINT_URL_DYNAMODB": "", "AWS_ENDPOINT_URL_S3": "", "AWS_ENDPOINT_URL_SQS": "",
		"TOKEN_SECRET": "", "CREDENTIALS_KEY": "",
	}
	crud := map[string]any{"DynamoDBCrudPolicy": map[string]any{"TableName": ref("AppTable")}}
	secret := map[string]any{"AWSSecretsManagerGetSecretValuePolicy": map[string]any{"SecretArn": ref("TokenSigningSecret")}}
	bedrock := map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Sid": "InvokeBedrockModels", "Effect": "Allow",
			"Action": []any{"bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"},
			"Resource": []any{
				map[string]any{"Fn::Sub": "arn:${AWS::Partition}:bedrock:*::foundation-model/*"},
				map[string]any{"Fn::Sub": "arn:${AWS::Partition}:bedrock:*:${AWS::AccountId}:inference-profile/*"},
			},
		}},
	}
	queueName := map[string]any{"QueueName": map[string]any{"Fn::GetAtt": []any{"ExecutionQueue", "QueueName"}}}
	// Uploaded images: ImagesFunction writes and serves them, the functions that run models read
	// them for image_url blocks naming a /media/ address. ListBucket makes S3 answer a missing
	// (expired) image with 404 NoSuchKey rather than 403.
	imageObjects := map[string]any{"Fn::Sub": "${MediaBucket.Arn}/tmp/images/*"}
	listMedia := map[string]any{"Sid": "TellMissingImages", "Effect": "Allow", "Action": "s3:ListBucket",
		"Resource": map[string]any{"Fn::GetAtt": []any{"MediaBucket", "Arn"}}}
	readImages := map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Sid": "ReadUploadedImages", "Effect": "Allow", "Action": "s3:GetObject", "Resource": imageObjects},
		listMedia,
	}}
	readWriteImages := map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Sid": "ReadWriteUploadedImages", "Effect": "Allow", "Action": []any{"s3:PutObject", "s3:GetObject"}, "Resource": imageObjects},
		listMedia,
	}}
	// The knowledge functions: file bytes under files/ (HeadObject is granted by GetObject), the
	// vector index's REST API, the Titan embedding models, the ingestion queue.
	fileObjects := map[string]any{"Fn::Sub": "${MediaBucket.Arn}/files/*"}
	// The files function also reads, copies and deletes the staged bytes of presigned uploads;
	// ingestion reads only files/.
	stagedObjects := map[string]any{"Fn::Sub": "${MediaBucket.Arn}/uploads/*"}
	listFiles := map[string]any{"Sid": "TellMissingFiles", "Effect": "Allow", "Action": "s3:ListBucket",
		"Resource": map[string]any{"Fn::GetAtt": []any{"MediaBucket", "Arn"}}}
	readWriteFiles := map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Sid": "ReadWriteFiles", "Effect": "Allow", "Action": []any{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}, "Resource": []any{fileObjects, stagedObjects}},
		listFiles,
	}}
	readFiles := map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Sid": "ReadFiles", "Effect": "Allow", "Action": "s3:GetObject", "Resource": fileObjects},
		listFiles,
	}}
	vectorIndex := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Sid": "UseVectorIndex", "Effect": "Allow",
		"Action":   []any{"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut", "es:ESHttpDelete"},
		"Resource": map[string]any{"Fn::Sub": "${VectorDomain.Arn}/*"},
	}}}
	titan := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Sid": "InvokeEmbeddingModels", "Effect": "Allow", "Action": "bedrock:InvokeModel",
		"Resource": []any{
			map[string]any{"Fn::Sub": "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/amazon.titan-embed-text-v2:0"},
			map[string]any{"Fn::Sub": "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/amazon.titan-embed-text-v1"},
		},
	}}}
	// Agents with knowledge bases search the index (and put the hybrid pipelines on a new
	// domain) and embed their queries (Titan is among the foundation models bedrock grants).
	searchIndex := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Sid": "SearchKnowledgeBases", "Effect": "Allow",
		"Action":   []any{"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut"},
		"Resource": map[string]any{"Fn::Sub": "${VectorDomain.Arn}/*"},
	}}}
	// A search's or retrieval's rerank: Bedrock's Rerank API (an action without a resource
	// type) and InvokeModel on the rerank models, in any Region (RerankRegion); the runs already
	// hold InvokeModel on every foundation model.
	rerankAction := map[string]any{"Sid": "RerankRetrieval", "Effect": "Allow", "Action": "bedrock:Rerank", "Resource": "*"}
	rerankRetrieval := map[string]any{"Version": "2012-10-17", "Statement": []any{rerankAction}}
	rerankSearch := map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Sid": "RerankSearches", "Effect": "Allow", "Action": "bedrock:Rerank", "Resource": "*"},
		map[string]any{"Sid": "InvokeRerankModels", "Effect": "Allow", "Action": "bedrock:InvokeModel", "Resource": []any{
			map[string]any{"Fn::Sub": "arn:${AWS::Partition}:bedrock:*::foundation-model/cohere.rerank-v3-5:0"},
			map[string]any{"Fn::Sub": "arn:${AWS::Partition}:bedrock:*::foundation-model/amazon.rerank-v1:0"},
		}},
	}}
	ingestQueue := map[string]any{"QueueName": map[string]any{"Fn::GetAtt": []any{"IngestQueue", "QueueName"}}}
	deadIngest := map[string]any{"QueueName": map[string]any{"Fn::GetAtt": []any{"IngestDeadLetterQueue", "QueueName"}}}
	deadExecutions := map[string]any{"QueueName": map[string]any{"Fn::GetAtt": []any{"ExecutionDeadLetterQueue", "QueueName"}}}
	sendIngest := map[string]any{"SQSSendMessagePolicy": ingestQueue}
	webhookQueue := map[string]any{"QueueName": map[string]any{"Fn::GetAtt": []any{"WebhookQueue", "QueueName"}}}
	// The mcpservers function seals MCP servers' headers; the runs open them. The webhooks
	// function seals webhooks' signing secrets; the delivery function opens them.
	credentials := map[string]any{"AWSSecretsManagerGetSecretValuePolicy": map[string]any{"SecretArn": ref("CredentialsKey")}}
	watchdogTable := map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Sid": "SettleLostExecutions", "Effect": "Allow", "Action": []any{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"},
			"Resource": map[string]any{"Fn::GetAtt": []any{"AppTable", "Arn"}}},
		map[string]any{"Sid": "ReadTheWatchList", "Effect": "Allow", "Action": "dynamodb:Query",
			"Resource": map[string]any{"Fn::Sub": "${AppTable.Arn}/index/gsi1"}},
	}}
	// Memory extraction: the runs queue a job after a turn; the extraction function calls the
	// model (Converse and the Titan embeddings: InvokeModel alone), searches and saves records.
	memoryQueue := map[string]any{"QueueName": map[string]any{"Fn::GetAtt": []any{"MemoryQueue", "QueueName"}}}
	sendMemory := map[string]any{"SQSSendMessagePolicy": memoryQueue}
	memoryEnv := map[string]any{"MEMORY_QUEUE_URL": ref("MemoryQueue")}
	extractModels := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Sid": "InvokeBedrockModels", "Effect": "Allow", "Action": "bedrock:InvokeModel",
		"Resource": []any{
			map[string]any{"Fn::Sub": "arn:${AWS::Partition}:bedrock:*::foundation-model/*"},
			map[string]any{"Fn::Sub": "arn:${AWS::Partition}:bedrock:*:${AWS::AccountId}:inference-profile/*"},
		},
	}}}
	memoryIndex := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Sid": "SearchAndSaveMemory", "Effect": "Allow",
		"Action":   []any{"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut"},
		"Resource": map[string]any{"Fn::Sub": "${VectorDomain.Arn}/*"},
	}}}
	type settings struct {
		memory, timeout int
		policies        any
	}
	// Variables of a function's own beside the Globals'.
	ownEnv := map[string]map[string]any{"RuntimeFunction": memoryEnv, "StreamFunction": memoryEnv, "WorkerFunction": memoryEnv,
		"MemoryExtractFunction": memoryEnv}
	want := map[string]settings{
		"MetaFunction": {256, 29, nil}, // public endpoints: no access to data or secrets
		// Checks MCP bindings against the stored servers without opening their headers.
		"AgentsFunction": {256, 29, []any{crud, secret}},
		// Seals and opens MCP servers' headers.
		"MCPServersFunction": {256, 29, []any{crud, secret, credentials}},
		"AuthFunction":       {256, 29, []any{crud, secret}},
		// Seals the webhooks' signing secrets (and opens them to rotate).
		"WebhooksFunction": {256, 29, []any{crud, secret, credentials, map[string]any{"SQSSendMessagePolicy": webhookQueue}}},
		// Fans events out and makes the attempts: the table, its own queue, and the credentials
		// key that opens the signing secrets.
		"WebhookDeliveryFunction": {256, 60, []any{crud, credentials, map[string]any{"SQSPollerPolicy": webhookQueue}, map[string]any{"SQSSendMessagePolicy": webhookQueue}}},
		"SessionsFunction":        {256, 29, []any{crud, secret}},
		// Stores uploads and serves them; no model, no queue.
		"ImagesFunction": {256, 29, []any{crud, secret, readWriteImages}},
		// Runs models synchronously within API Gateway's 30 s and queues asynchronous runs.
		"RuntimeFunction": {512, 29, []any{crud, secret, credentials, bedrock, searchIndex, rerankRetrieval, readImages, map[string]any{"SQSSendMessagePolicy": queueName}, map[string]any{"SQSSendMessagePolicy": webhookQueue}, sendMemory}},
		// The runtime group behind the streaming function URL: the same rights, runs of up to 5 min.
		"StreamFunction": {512, 300, []any{crud, secret, credentials, bedrock, searchIndex, rerankRetrieval, readImages, map[string]any{"SQSSendMessagePolicy": queueName}, map[string]any{"SQSSendMessagePolicy": webhookQueue}, sendMemory}},
		// Runs queued executions for up to Lambda's 15 minutes; the poller policy also grants
		// sqs:ChangeMessageVisibility, which brings a job given back within seconds.
		"WorkerFunction": {512, 900, []any{crud, secret, credentials, bedrock, searchIndex, rerankRetrieval, readImages, map[string]any{"SQSPollerPolicy": queueName}, map[string]any{"SQSSendMessagePolicy": webhookQueue}, sendMemory}},
		// Marks the executions of dead-lettered jobs failed and tells the webhooks: the table and
		// WebhookQueue.
		"ExecutionFailedFunction": {256, 60, []any{crud, map[string]any{"SQSPollerPolicy": deadExecutions}, map[string]any{"SQSSendMessagePolicy": webhookQueue}}},
		// Uploads (base64-decoded bodies of up to 6 MB) and deletes chunks of deleted files; a
		// delete that ends an ingestion run tells the webhooks.
		"FilesFunction":       {512, 29, []any{crud, secret, readWriteFiles, vectorIndex, sendIngest, map[string]any{"SQSSendMessagePolicy": webhookQueue}}},
		"CollectionsFunction": {256, 29, []any{crud, secret}},
		// Enqueues ingestion, embeds search queries and searches the index; a read that settles
		// an overdue run, or a sync that cannot be queued, tells the webhooks.
		"KnowledgeFunction": {512, 29, []any{crud, secret, vectorIndex, titan, rerankSearch, sendIngest, map[string]any{"SQSSendMessagePolicy": webhookQueue}}},
		// Extracts, chunks, embeds and indexes for up to Lambda's 15 minutes; no token secret.
		// Both ingestion functions tell the webhooks that a run ended.
		"IngestFunction": {2048, 900, []any{crud, readFiles, vectorIndex, titan, map[string]any{"SQSPollerPolicy": ingestQueue}, sendIngest, map[string]any{"SQSSendMessagePolicy": webhookQueue}}},
		// Fails the executions whose worker or job was lost: reads its list on gsi1, reads and
		// writes executions and leases, tells the webhooks; nothing else (no Scan, no Delete).
		"WatchdogFunction":     {256, 60, []any{watchdogTable, map[string]any{"SQSSendMessagePolicy": webhookQueue}}},
		"IngestFailedFunction": {256, 60, []any{crud, vectorIndex, map[string]any{"SQSPollerPolicy": deadIngest}, map[string]any{"SQSSendMessagePolicy": webhookQueue}}},
		// Extracts and saves memories: the table, the model, the index, its own queue; no token
		// secret (it serves no request).
		// Records and blocks: the table, the index (a forgotten user's vectors are deleted) and the
		// Titan models that embed a record's text.
		"MemoryFunction":        {256, 29, []any{crud, secret, vectorIndex, titan}},
		"MemoryExtractFunction": {256, 120, []any{crud, extractModels, memoryIndex, map[string]any{"SQSPollerPolicy": memoryQueue}}},
	}
	fns := tpl.Functions()
	if len(fns) != len(want) {
		t.Fatalf("%d functions, want %d", len(fns), len(want))
	}
	for _, f := range fns {
		p := tpl.Properties(f.LogicalID)
		got := map[string]any{
			"Runtime": p["Runtime"], "Architectures": p["Architectures"], "Handler": p["Handler"],
			"MemorySize": p["MemorySize"], "Timeout": p["Timeout"],
			"Env":      p["Environment"].(map[string]any)["Variables"],
			"Policies": p["Policies"],
			"Metadata": tpl.Resources[f.LogicalID].Metadata,
		}
		w, ok := want[f.LogicalID]
		if !ok {
			t.Errorf("unexpected function %s", f.LogicalID)
			continue
		}
		env := maps.Clone(wantEnv)
		maps.Copy(env, ownEnv[f.LogicalID])
		if f.LogicalID == "MetaFunction" {
			// The studio learns where to stream from the meta function.
			env["STREAM_BASE_URL"] = map[string]any{"Fn::GetAtt": []any{"StreamFunctionUrl", "FunctionUrl"}}
		}
		wantProps := map[string]any{
			"Runtime": "provided.al2023", "Architectures": []any{"arm64"}, "Handler": "bootstrap",
			"MemorySize": w.memory, "Timeout": w.timeout,
			"Env":      env,
			"Policies": w.policies,
			"Metadata": map[string]any{"BuildMethod": "makefile"},
		}
		if diff := cmp.Diff(wantProps, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", f.LogicalID, diff)
		}
	}
}

// TestTemplateRoutesDeployable checks what API Gateway would refuse or silently drop: every
// HttpApi event is on the one API, no route path ends in "/", and no method and path is taken
// twice.
func TestTemplateRoutesDeployable(t *testing.T) {
	tpl := repoTemplate(t)
	var apis []string
	for id, r := range tpl.Resources {
		if r.Type == TypeHTTPAPI {
			apis = append(apis, id)
		}
	}
	if !slices.Equal(apis, []string{"Api"}) {
		t.Fatalf("HttpApi resources = %v, want [Api]", apis)
	}
	cors, _ := tpl.Resources["Api"].Properties["CorsConfiguration"].(map[string]any)
	for _, h := range []string{"x-api-key", "authorization", "content-type"} {
		if !slices.Contains(cors["AllowHeaders"].([]any), any(h)) {
			t.Errorf("CorsConfiguration.AllowHeaders lacks %s", h)
		}
	}
	seen := map[Route]string{}
	for _, f := range tpl.Functions() {
		events, _ := tpl.Properties(f.LogicalID)["Events"].(map[string]any)
		for name, ev := range events {
			if ev.(map[string]any)["Type"] != "HttpApi" {
				continue
			}
			props := ev.(map[string]any)["Properties"].(map[string]any)
			if diff := cmp.Diff(ref("Api"), props["ApiId"]); diff != "" {
				t.Errorf("%s.%s: ApiId (-want +got):\n%s", f.LogicalID, name, diff)
			}
		}
		for _, r := range append(slices.Clone(f.Routes), f.Fallbacks...) {
			if r.Path != DefaultRoute && (!strings.HasPrefix(r.Path, "/") || strings.HasSuffix(r.Path, "/")) {
				t.Errorf("%s: route %s %s must start with / and not end with /", f.LogicalID, r.Method, r.Path)
			}
			if other, dup := seen[r]; dup {
				t.Errorf("route %s %s is on both %s and %s", r.Method, r.Path, other, f.LogicalID)
			}
			seen[r] = f.LogicalID
		}
	}
}

func TestTemplateData(t *testing.T) {
	tpl := repoTemplate(t)
	tables := []Table{{
		LogicalID: "AppTable", HashKey: "pk", RangeKey: "sk",
		Attributes:   map[string]string{"pk": "S", "sk": "S", "gsi1pk": "S", "gsi1sk": "S"},
		GSIs:         []Index{{Name: "gsi1", HashKey: "gsi1pk", RangeKey: "gsi1sk", Projection: "ALL"}},
		TTLAttribute: "ttl",
	}}
	if diff := cmp.Diff(tables, tpl.Tables()); diff != "" {
		t.Errorf("Tables (-want +got):\n%s", diff)
	}
	queues := []Queue{
		{LogicalID: "ExecutionDeadLetterQueue", VisibilityTimeout: 360},
		{LogicalID: "ExecutionQueue", VisibilityTimeout: 960, DeadLetterTarget: "ExecutionDeadLetterQueue", MaxReceiveCount: 12},
		{LogicalID: "IngestDeadLetterQueue", VisibilityTimeout: 360},
		{LogicalID: "IngestQueue", VisibilityTimeout: 960, DeadLetterTarget: "IngestDeadLetterQueue", MaxReceiveCount: 3},
		{LogicalID: "MemoryDeadLetterQueue"},
		{LogicalID: "MemoryQueue", VisibilityTimeout: 720, DeadLetterTarget: "MemoryDeadLetterQueue", MaxReceiveCount: 3},
		{LogicalID: "WebhookDeadLetterQueue"},
		{LogicalID: "WebhookQueue", VisibilityTimeout: 360, DeadLetterTarget: "WebhookDeadLetterQueue", MaxReceiveCount: 12},
	}
	if diff := cmp.Diff(queues, tpl.Queues()); diff != "" {
		t.Errorf("Queues (-want +got):\n%s", diff)
	}
	buckets := []Bucket{{LogicalID: "MediaBucket", ExpirePrefixes: map[string]int{"tmp/": 1, "uploads/": 1}}}
	if diff := cmp.Diff(buckets, tpl.Buckets()); diff != "" {
		t.Errorf("Buckets (-want +got):\n%s", diff)
	}

	props := func(id string) map[string]any { return tpl.Resources[id].Properties }
	checks := []struct {
		name      string
		got, want any
	}{
		{"table billing", props("AppTable")["BillingMode"], "PAY_PER_REQUEST"},
		{"table PITR", props("AppTable")["PointInTimeRecoverySpecification"], map[string]any{"PointInTimeRecoveryEnabled": true}},
		{"table SSE", props("AppTable")["SSESpecification"], map[string]any{"SSEEnabled": true}},
		{"bucket public access", props("MediaBucket")["PublicAccessBlockConfiguration"], map[string]any{
			"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true}},
		{"bucket SSE", props("MediaBucket")["BucketEncryption"] != nil, true},
		{"DLQ retention", props("IngestDeadLetterQueue")["MessageRetentionPeriod"], 1209600},
		{"execution DLQ retention", props("ExecutionDeadLetterQueue")["MessageRetentionPeriod"], 1209600},
		{"execution queue SSE", props("ExecutionQueue")["SqsManagedSseEnabled"], true},
		{"bedrock model default", tpl.Parameters["BedrockModelId"].(map[string]any)["Default"], "global.anthropic.claude-haiku-4-5-20251001-v1:0"},
		{"openai base URL default", tpl.Parameters["OpenAIBaseURL"].(map[string]any)["Default"], ""},
		{"openai model default", tpl.Parameters["OpenAIModel"].(map[string]any)["Default"], ""},
		{"public base URL default", tpl.Parameters["PublicBaseURL"].(map[string]any)["Default"], ""},
		{"secret", props("TokenSigningSecret")["GenerateSecretString"], map[string]any{"PasswordLength": 64, "ExcludePunctuation": true}},
		{"opensearch version", props("VectorDomain")["EngineVersion"], "OpenSearch_2.19"},
		{"opensearch instance", props("VectorDomain")["ClusterConfig"].(map[string]any)["InstanceType"], ref("OpenSearchInstanceType")},
		{"opensearch instance default", tpl.Parameters["OpenSearchInstanceType"].(map[string]any)["Default"], "t3.small.search"},
		{"opensearch EBS", props("VectorDomain")["EBSOptions"], map[string]any{"EBSEnabled": true, "VolumeType": "gp3", "VolumeSize": 10}},
		{"opensearch node-to-node", props("VectorDomain")["NodeToNodeEncryptionOptions"], map[string]any{"Enabled": true}},
		{"opensearch at rest", props("VectorDomain")["EncryptionAtRestOptions"], map[string]any{"Enabled": true}},
		{"opensearch HTTPS", props("VectorDomain")["DomainEndpointOptions"].(map[string]any)["EnforceHTTPS"], true},
		{"api url", tpl.Outputs["ApiUrl"].(map[string]any)["Value"], map[string]any{"Fn::Sub": "https://${Api}.execute-api.${AWS::Region}.${AWS::URLSuffix}"}},
		{"table output", tpl.Outputs["TableName"].(map[string]any)["Value"], ref("AppTable")},
		{"bucket output", tpl.Outputs["BucketName"].(map[string]any)["Value"], ref("MediaBucket")},
		{"queue output", tpl.Outputs["IngestQueueUrl"].(map[string]any)["Value"], ref("IngestQueue")},
		{"execution queue output", tpl.Outputs["ExecutionQueueUrl"].(map[string]any)["Value"], ref("ExecutionQueue")},
		{"execution DLQ output", tpl.Outputs["ExecutionDeadLetterQueueUrl"].(map[string]any)["Value"], ref("ExecutionDeadLetterQueue")},
		{"ingest DLQ output", tpl.Outputs["IngestDeadLetterQueueUrl"].(map[string]any)["Value"], ref("IngestDeadLetterQueue")},
		{"memory queue output", tpl.Outputs["MemoryQueueUrl"].(map[string]any)["Value"], ref("MemoryQueue")},
		{"memory DLQ output", tpl.Outputs["MemoryDeadLetterQueueUrl"].(map[string]any)["Value"], ref("MemoryDeadLetterQueue")},
		{"memory DLQ retention", props("MemoryDeadLetterQueue")["MessageRetentionPeriod"], 1209600},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	// Physical names are left to CloudFormation so that stacks can coexist.
	for id, r := range tpl.Resources {
		for _, name := range []string{"TableName", "BucketName", "QueueName", "DomainName", "Name", "FunctionName"} {
			if name == "FunctionName" && r.Type == "AWS::Lambda::Permission" {
				continue // the function the permission is on, not a name to create
			}
			if _, ok := r.Properties[name]; ok {
				t.Errorf("%s sets %s", id, name)
			}
		}
	}
}

// TestTemplateQueueConsumers checks the functions fed by SQS: they serve no HTTP route, take
// the batch size the work suits (one execution per invocation; ingestion jobs in small batches
// within Lambda's concurrency bound) and report failed messages one by one, may poll their
// queue, and the queue hides a message longer than the function may run (Lambda refuses the
// event source mapping otherwise) and sends it to a dead-letter queue after a few failed
// deliveries, unless it is itself a dead-letter queue, whose consumer is the last resort.
func TestTemplateQueueConsumers(t *testing.T) {
	tpl := repoTemplate(t)
	queues := map[string]Queue{}
	deadLetter := map[string]bool{}
	for _, q := range tpl.Queues() {
		queues[q.LogicalID] = q
		if q.DeadLetterTarget != "" {
			deadLetter[q.DeadLetterTarget] = true
		}
	}
	batch := map[string]int{"WorkerFunction": 1, "IngestFunction": 5, "IngestFailedFunction": 1, "ExecutionFailedFunction": 1,
		"WebhookDeliveryFunction": 1, "MemoryExtractFunction": 1}
	consumers := map[string][]string{}
	for _, f := range tpl.Functions() {
		if len(f.Queues) == 0 {
			continue
		}
		if len(f.Routes)+len(f.Fallbacks) > 0 {
			t.Errorf("%s consumes %v and also serves HTTP routes", f.LogicalID, f.Queues)
		}
		p := tpl.Properties(f.LogicalID)
		timeout, ok := integer(p["Timeout"])
		if !ok {
			t.Errorf("%s: no Timeout", f.LogicalID)
		}
		for name, ev := range p["Events"].(map[string]any) {
			e := ev.(map[string]any)
			if e["Type"] != "SQS" {
				continue
			}
			props := e["Properties"].(map[string]any)
			q := refID(props["Queue"])
			consumers[q] = append(consumers[q], f.LogicalID)
			if diff := cmp.Diff(map[string]any{"Fn::GetAtt": []any{q, "Arn"}}, props["Queue"]); diff != "" {
				t.Errorf("%s.%s: Queue (-want +got):\n%s", f.LogicalID, name, diff)
			}
			if want, ok := batch[f.LogicalID]; !ok || props["BatchSize"] != want {
				t.Errorf("%s.%s: BatchSize %v, want %d", f.LogicalID, name, props["BatchSize"], want)
			}
			if diff := cmp.Diff([]any{"ReportBatchItemFailures"}, props["FunctionResponseTypes"]); diff != "" {
				t.Errorf("%s.%s: FunctionResponseTypes (-want +got):\n%s", f.LogicalID, name, diff)
			}
			if sc, ok := props["ScalingConfig"].(map[string]any); ok {
				// Lambda accepts 2 to 1000 concurrent invocations per mapping.
				if n, _ := integer(sc["MaximumConcurrency"]); n < 2 || n > 1000 {
					t.Errorf("%s.%s: MaximumConcurrency %v, want 2 to 1000", f.LogicalID, name, sc["MaximumConcurrency"])
				}
			}
			qu, ok := queues[q]
			if !ok {
				t.Errorf("%s.%s: no queue %s", f.LogicalID, name, q)
				continue
			}
			if qu.VisibilityTimeout < timeout {
				t.Errorf("%s: visibility timeout %d s is shorter than %s's timeout %d s", q, qu.VisibilityTimeout, f.LogicalID, timeout)
			}
			if !deadLetter[q] && (qu.DeadLetterTarget == "" || qu.MaxReceiveCount < 1) {
				t.Errorf("%s has no dead-letter queue", q)
			}
			poller := map[string]any{"SQSPollerPolicy": map[string]any{"QueueName": map[string]any{"Fn::GetAtt": []any{q, "QueueName"}}}}
			if !slices.ContainsFunc(p["Policies"].([]any), func(v any) bool { return cmp.Equal(v, poller) }) {
				t.Errorf("%s: no SQSPollerPolicy on %s", f.LogicalID, q)
			}
		}
	}
	want := map[string][]string{"ExecutionQueue": {"WorkerFunction"}, "IngestQueue": {"IngestFunction"},
		"IngestDeadLetterQueue": {"IngestFailedFunction"}, "ExecutionDeadLetterQueue": {"ExecutionFailedFunction"},
		"WebhookQueue": {"WebhookDeliveryFunction"}, "MemoryQueue": {"MemoryExtractFunction"}}
	if diff := cmp.Diff(want, consumers); diff != "" {
		t.Errorf("queue consumers (-want +got):\n%s", diff)
	}
}
