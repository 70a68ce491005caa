package app_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/google/uuid"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/mcptest"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/knowledge"
	"github.com/agentorch/agentorch/shared/mcp"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/webhooks"
)

// TestMain starts DynamoDB Local and the other stand-ins unless the run already provides them.
func TestMain(m *testing.M) { localstack.RunTests(m) }

// Placeholders in events/*.json that the replay fills in.
const (
	placeholderKey       = "{{API_KEY}}"
	placeholderAgentID   = "{{AGENT_ID}}"
	placeholderAgentKey  = "{{AGENT_KEY}}"
	placeholderKeyID     = "{{KEY_ID}}"
	placeholderSession   = "{{SESSION_ID}}"
	placeholderMessage   = "{{MESSAGE_ID}}"
	placeholderExecution = "{{EXECUTION_ID}}"
	placeholderMedia     = "{{MEDIA_NAME}}"
	placeholderFile      = "{{FILE_ID}}"
	placeholderUploaded  = "{{UPLOADED_FILE_ID}}"
	placeholderColl      = "{{COLLECTION_ID}}"
	placeholderKB        = "{{KB_ID}}"
	placeholderRun       = "{{RUN_ID}}" // of an ingestion job (checked for shape, not replayed)
	placeholderMCPURL    = "{{MCP_URL}}"
	placeholderMCPServer = "{{MCP_SERVER_ID}}"
	// A server behind OAuth (mcptest.OAuthServer), registered, and an authorization of it that
	// came back (its code and state).
	placeholderMCPOAuthURL    = "{{MCP_OAUTH_URL}}"
	placeholderMCPOAuthServer = "{{MCP_OAUTH_SERVER_ID}}"
	placeholderOAuthCode      = "{{OAUTH_CODE}}"
	placeholderOAuthState     = "{{OAUTH_STATE}}"
	placeholderWebhook        = "{{WEBHOOK_ID}}"
	placeholderDelivery       = "{{WEBHOOK_DELIVERY_ID}}"
	// A memory record and block, made by replaying their create events.
	placeholderMemoryRecord = "{{MEMORY_RECORD_ID}}"
	placeholderMemoryBlock  = "{{MEMORY_BLOCK_ID}}"
)

// mediaRoute serves an uploaded image's bytes rather than JSON.
var mediaRoute = sam.Route{Method: http.MethodGet, Path: "/media/{name}"}

// placeholder finds a placeholder the replay did not fill in.
var placeholder = regexp.MustCompile(`\{\{[A-Z_]+\}\}`)

type lambdaHandler func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// eventFiles lists the sample events, deletes last: each replay makes its own key and records,
// but replaying the files in this order by hand against one stack (make invoke) also works.
func eventFiles(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "events", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no events in %s: %v", filepath.Join(root, "events"), err)
	}
	isDelete := func(f string) bool { return strings.Contains(filepath.Base(f), "-delete-") }
	slices.SortStableFunc(files, func(a, b string) int {
		switch {
		case isDelete(a) == isDelete(b):
			return strings.Compare(a, b)
		case isDelete(a):
			return 1
		}
		return -1
	})
	return files
}

// TestEventsReplay runs every sample event in events/ through its function's Lambda adapter and
// handler against DynamoDB Local. An event must name, by its file prefix, a function of
// template.yaml; its routeKey must be one of that function's explicit routes, and the one API
// Gateway would pick for its path; the response must be a success with a JSON body (204 without
// one), except the media read, which must answer the bytes of the image the upload event carries.
// Every explicit route must have an event. Events of queue consumers (the worker) are SQS
// events, checked by TestEventsQueue and replayed with the consumer.
func TestEventsReplay(t *testing.T) {
	root := repoRoot(t)
	tpl := loadTemplate(t)
	files := eventFiles(t, root)
	env := localstack.NewTestEnv(t)
	log := slog.New(slog.DiscardHandler)
	a := app.NewWithAWS(env.AWS, env.Config, log)
	a.UseMCP(mcp.ForPolicy)
	// Knowledge bases are ingested by the ingest function behind the SQS event source stand-in.
	env.RunEventSources(t, a.Processor)
	fns := map[string]sam.Function{}
	queueFns := map[string]bool{}
	handlers := map[string]lambdaHandler{}
	for _, f := range tpl.Functions() {
		if queueFunction(f) {
			queueFns[f.Dir] = true
			continue
		}
		g, err := a.Handler(f.Dir)
		if err != nil {
			t.Fatal(err)
		}
		fns[f.Dir], handlers[f.Dir] = f, platform.HTTPHandler(g, log)
	}
	r := &replayer{app: a, handlers: handlers, root: root}
	r.replayAll(t, tpl, files, fns, queueFns)
}

// replayAll replays every HTTP event of files through r's handlers, as TestEventsReplay says,
// and checks that every explicit route of fns has one.
func (r *replayer) replayAll(t *testing.T, tpl *sam.Template, files []string, fns map[string]sam.Function, queueFns map[string]bool) {
	t.Helper()
	a, root := r.app, r.root

	covered := map[string][]sam.Route{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		dir, _, _ := strings.Cut(name, "-")
		if queueFns[dir] || fns[dir].URL != nil {
			continue // queue events, and function URL events (events_stream_test.go)
		}
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f, ok := fns[dir]
			if !ok {
				t.Fatalf("file prefix %q names no function of template.yaml", dir)
			}
			route := checkEvent(t, tpl, f, raw)
			covered[dir] = append(covered[dir], route)

			company := "company-" + name
			secret := r.newKey(t, company)
			if route.Path == "/api/v1/audit" || route.Path == "/api/v1/limits" {
				secret = r.newAdminKey(t, company) // the audit log and the limits are for admin keys only
			}
			vars := r.fill(t, raw, secret, route)
			if bytes.Contains(raw, []byte(placeholderKeyID)) {
				k, _, err := a.Auth.CreateKey(t.Context(), auth.NewKey{Name: "to revoke", Owner: "o", Company: company})
				if err != nil {
					t.Fatal(err)
				}
				vars[placeholderKeyID] = k.ID
			}
			status, header, body := r.replay(t, dir, raw, vars)
			if status < 200 || status > 299 {
				t.Fatalf("status %d, body %s", status, body)
			}
			if route == mediaRoute {
				checkMedia(t, header, body, uploadEventImage(t, root))
				return
			}
			if status == http.StatusNoContent {
				if len(body) != 0 {
					t.Errorf("204 with a body: %s", body)
				}
				return
			}
			if !json.Valid(body) || len(bytes.TrimSpace(body)) == 0 {
				t.Errorf("status %d, body is not JSON: %q", status, body)
			}
		})
	}
	for dir, f := range fns {
		for _, rt := range f.Routes {
			if !slices.Contains(covered[dir], rt) {
				t.Errorf("%s: route %s %s has no event in events/", f.LogicalID, rt.Method, rt.Path)
			}
		}
	}
}

// TestEventsQueueShape checks the sample events of the queue consumers without running them
// (their replay belongs with the consumer): each is an SQS event whose records come from a queue
// the function consumes, with a job body its consumer accepts (sessions.ParseJob for the worker
// and its dead-letter consumer, knowledge.CheckJob for the ingestion functions) once the
// placeholders are filled in.
// Every consumer must have one.
func TestEventsQueueShape(t *testing.T) {
	root := repoRoot(t)
	have := map[string]bool{}
	for _, f := range loadTemplate(t).Functions() {
		if !queueFunction(f) || len(f.Queues) == 0 {
			continue // a scheduled function takes no SQS event (TestWatchdogTaskSweeps runs its task)
		}
		files, err := filepath.Glob(filepath.Join(root, "events", f.Dir+"-*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			have[f.Dir] = true
			t.Run(filepath.Base(file), func(t *testing.T) {
				raw, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				var ev events.SQSEvent
				dec := json.NewDecoder(bytes.NewReader(raw))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&ev); err != nil {
					t.Fatalf("not an SQS event: %v", err)
				}
				if len(ev.Records) == 0 {
					t.Fatal("no records")
				}
				const id = "5d8f4c1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f"
				for i, rec := range ev.Records {
					queue := rec.EventSourceARN[strings.LastIndex(rec.EventSourceARN, ":")+1:]
					if rec.EventSource != "aws:sqs" || !slices.ContainsFunc(f.Queues, func(q string) bool { return strings.Contains(queue, q) }) {
						t.Errorf("record %d: source %q %q, want aws:sqs from one of %v", i, rec.EventSource, rec.EventSourceARN, f.Queues)
					}
					if rec.MessageId == "" || rec.ReceiptHandle == "" || rec.Attributes["ApproximateReceiveCount"] == "" {
						t.Errorf("record %d lacks messageId, receiptHandle or ApproximateReceiveCount", i)
					}
					if sum := fmt.Sprintf("%x", md5.Sum([]byte(rec.Body))); rec.Md5OfBody != sum {
						t.Errorf("record %d: md5OfBody %s, want %s", i, rec.Md5OfBody, sum)
					}
					body := strings.NewReplacer(placeholderSession, id, placeholderExecution, id,
						placeholderKB, id, placeholderFile, id, placeholderRun, id).Replace(rec.Body)
					if left := placeholder.FindString(body); left != "" {
						t.Errorf("record %d: placeholder %s is not one the replay fills in", i, left)
					}
					var err error
					switch f.Dir {
					case "worker", "executionfailed":
						_, _, err = sessions.ParseJob(body)
					case "webhookdelivery":
						err = webhooks.CheckJob(body)
					case "memoryextract":
						err = checkMemoryJob(body)
					default:
						err = knowledge.CheckJob(body)
					}
					if err != nil {
						t.Errorf("record %d: body %s is not a job: %v", i, body, err)
					}
				}
			})
		}
	}
	for _, f := range loadTemplate(t).Functions() {
		if queueFunction(f) && len(f.Queues) > 0 && !have[f.Dir] {
			t.Errorf("%s has no sample event events/%s-*.json", f.LogicalID, f.Dir)
		}
	}
}

// checkMemoryJob checks an extraction job as memory.Service.Enqueue writes one: every field
// known, a scope with company and user, and the user's message.
func checkMemoryJob(body string) error {
	var job domain.MemoryExtractJob
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&job); err != nil {
		return err
	}
	if job.Scope.Company == "" || !domain.ValidUserID(job.Scope.UserID) || job.SessionID == "" || job.ExecutionID == "" || job.User == "" {
		return fmt.Errorf("job %+v lacks its scope, session, execution or user message", job)
	}
	return nil
}

// checkEvent checks the event's shape against the template and returns its route.
func checkEvent(t *testing.T, tpl *sam.Template, f sam.Function, raw []byte) sam.Route {
	t.Helper()
	var ev events.APIGatewayV2HTTPRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		t.Fatalf("not an API Gateway HTTP API (payload 2.0) event: %v", err)
	}
	if ev.Version != "2.0" || ev.RequestContext.Stage != "$default" {
		t.Errorf("version %q, stage %q; want 2.0, $default", ev.Version, ev.RequestContext.Stage)
	}
	// API Gateway base64-encodes bodies that are not text, such as multipart uploads.
	if ev.IsBase64Encoded {
		if _, err := base64.StdEncoding.DecodeString(ev.Body); err != nil || ev.Body == "" {
			t.Errorf("isBase64Encoded, but the body is not base64: %v", err)
		}
	}
	method, path, _ := strings.Cut(ev.RouteKey, " ")
	route := sam.Route{Method: method, Path: path}
	if !slices.Contains(f.Routes, route) {
		t.Fatalf("routeKey %q is not an explicit route of %s in template.yaml", ev.RouteKey, f.LogicalID)
	}
	if ev.RequestContext.RouteKey != ev.RouteKey || ev.RequestContext.HTTP.Method != method || ev.RequestContext.HTTP.Path != ev.RawPath {
		t.Errorf("requestContext (routeKey %q, method %q, path %q) disagrees with the event (%q, %q)",
			ev.RequestContext.RouteKey, ev.RequestContext.HTTP.Method, ev.RequestContext.HTTP.Path, ev.RouteKey, ev.RawPath)
	}
	if ev.RequestContext.RequestID == "" {
		t.Error("requestContext.requestId is empty")
	}
	if id, got, _ := tpl.Match(method, ev.RawPath); id != f.LogicalID || got != route {
		t.Errorf("API Gateway would send %s %s to %s as %v, not to %s as %v", method, ev.RawPath, id, got, f.LogicalID, route)
	}
	return route
}

// replayer runs events through the functions' Lambda handlers.
type replayer struct {
	app      *app.App
	handlers map[string]lambdaHandler
	root     string
}

func (r *replayer) newKey(t *testing.T, company string) string {
	t.Helper()
	_, secret, err := r.app.Auth.CreateKey(t.Context(), auth.NewKey{Owner: "o", Company: company})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// newAdminKey is newKey with the admin scope.
func (r *replayer) newAdminKey(t *testing.T, company string) string {
	t.Helper()
	_, secret, err := r.app.Auth.CreateKey(t.Context(), auth.NewKey{Owner: "o", Company: company, Scopes: []string{auth.ScopeAdmin}})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// fill makes the records an event's placeholders name, with the caller's key, and returns the
// placeholder values. Session events get a session made by replaying the create event; reads,
// deletes and feedback get one execution in it first (replaying the execute event), so that they
// meet messages, events and an execution record, and MESSAGE_ID and EXECUTION_ID name them.
func (r *replayer) fill(t *testing.T, raw []byte, secret string, route sam.Route) map[string]string {
	t.Helper()
	has := func(p string) bool { return bytes.Contains(raw, []byte(p)) }
	vars := map[string]string{placeholderKey: secret}
	if has(placeholderAgentID) || has(placeholderAgentKey) {
		vars[placeholderAgentID], vars[placeholderAgentKey] = r.newAgent(t, secret)
	}
	if has(placeholderMedia) {
		vars[placeholderMedia] = r.upload(t, secret)
	}
	if has(placeholderFile) || has(placeholderKB) {
		vars[placeholderFile] = r.newFile(t, secret)
	}
	if has(placeholderUploaded) {
		vars[placeholderUploaded] = r.presignedUpload(t, secret)
	}
	if has(placeholderColl) {
		vars[placeholderColl] = r.newCollection(t, secret)
	}
	if has(placeholderKB) {
		vars[placeholderKB] = r.newKB(t, secret, vars[placeholderFile])
	}
	if has(placeholderMCPURL) || has(placeholderMCPServer) {
		vars[placeholderMCPURL] = r.mcpURL(t)
	}
	if has(placeholderMCPServer) {
		vars[placeholderMCPServer] = r.newMCPServer(t, secret, vars[placeholderMCPURL])
	}
	if has(placeholderMCPOAuthURL) || has(placeholderMCPOAuthServer) || has(placeholderOAuthState) {
		vars[placeholderMCPOAuthURL] = r.mcpOAuthURL(t)
	}
	if has(placeholderMCPOAuthServer) || has(placeholderOAuthState) {
		vars[placeholderMCPOAuthServer] = r.newOAuthMCPServer(t, secret, vars[placeholderMCPOAuthURL])
	}
	if has(placeholderOAuthState) {
		vars[placeholderOAuthCode], vars[placeholderOAuthState] = r.authorizeMCPServer(t, secret, vars[placeholderMCPOAuthServer])
	}
	if has(placeholderWebhook) {
		vars[placeholderWebhook] = r.newWebhook(t, secret)
	}
	if has(placeholderDelivery) {
		vars[placeholderDelivery] = r.newDelivery(t, secret, vars[placeholderWebhook])
	}
	if has(placeholderSession) || has(placeholderMessage) || has(placeholderExecution) {
		vars[placeholderSession] = r.newSession(t, secret)
		if has(placeholderMessage) || has(placeholderExecution) || route.Method != http.MethodPost {
			vars[placeholderMessage], vars[placeholderExecution] = r.execute(t, secret, vars[placeholderSession])
		}
	}
	if has(placeholderMemoryRecord) {
		vars[placeholderMemoryRecord] = r.newMemoryItem(t, "memory-create-record.json", secret)
	}
	if has(placeholderMemoryBlock) {
		vars[placeholderMemoryBlock] = r.newMemoryItem(t, "memory-create-block.json", secret)
	}
	if has(placeholderPaused) {
		vars[placeholderSession], vars[placeholderPaused] = r.pausedExecution(t, secret)
	}
	return vars
}

// replayJSON replays one event of events/ and decodes its JSON response into out.
func (r *replayer) replayJSON(t *testing.T, file string, vars map[string]string, wantStatus int, out any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(r.root, "events", file))
	if err != nil {
		t.Fatal(err)
	}
	dir, _, _ := strings.Cut(file, "-")
	status, _, body := r.replay(t, dir, raw, vars)
	if status != wantStatus {
		t.Fatalf("%s for the event: status %d, want %d; body %s", file, status, wantStatus, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("%s for the event: %v; body %s", file, err, body)
	}
}

// newAgent creates an agent by replaying the create event and returns its id and agent_key.
func (r *replayer) newAgent(t *testing.T, secret string) (id, key string) {
	t.Helper()
	var out struct {
		ID       string `json:"id"`
		AgentKey string `json:"agent_key"`
	}
	r.replayJSON(t, "agents-create-agent.json", map[string]string{placeholderKey: secret}, http.StatusCreated, &out)
	if out.ID == "" || out.AgentKey == "" {
		t.Fatalf("created agent without id or agent_key: %+v", out)
	}
	return out.ID, out.AgentKey
}

// newMemoryItem creates a memory record or block by replaying its create event (with an agent of
// its own where the event names one) and returns its id.
func (r *replayer) newMemoryItem(t *testing.T, file, secret string) string {
	t.Helper()
	vars := map[string]string{placeholderKey: secret}
	raw, err := os.ReadFile(filepath.Join(r.root, "events", file))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(placeholderAgentID)) {
		vars[placeholderAgentID], _ = r.newAgent(t, secret)
	}
	var out struct {
		ID string `json:"id"`
	}
	r.replayJSON(t, file, vars, http.StatusCreated, &out)
	if out.ID == "" {
		t.Fatalf("%s: created without id", file)
	}
	return out.ID
}

// newFile uploads a file by replaying the upload event and returns its id.
func (r *replayer) newFile(t *testing.T, secret string) string {
	t.Helper()
	var out struct {
		ID string `json:"id"`
	}
	r.replayJSON(t, "files-upload-file.json", map[string]string{placeholderKey: secret}, http.StatusCreated, &out)
	if out.ID == "" {
		t.Fatal("uploaded file without id")
	}
	return out.ID
}

// presignedUpload starts an upload by replaying its event, PUTs the announced number of bytes to
// the presigned URL (the S3 stand-in) and returns the file's id, ready for complete.
func (r *replayer) presignedUpload(t *testing.T, secret string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(r.root, "events", "files-start-upload.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	var start struct {
		Size int `json:"size"`
	}
	if err := json.Unmarshal([]byte(ev.Body), &start); err != nil || start.Size <= 0 {
		t.Fatalf("files-start-upload.json: body %s has no size: %v", ev.Body, err)
	}
	var out struct {
		FileID    string            `json:"file_id"`
		UploadURL string            `json:"upload_url"`
		Headers   map[string]string `json:"headers"`
	}
	r.replayJSON(t, "files-start-upload.json", map[string]string{placeholderKey: secret}, http.StatusCreated, &out)
	data := bytes.Repeat([]byte("# Handbook\n\nReturns are accepted within thirty days.\n"), start.Size)[:start.Size]
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, out.UploadURL, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range out.Headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT to the presigned URL: %d", res.StatusCode)
	}
	return out.FileID
}

// newCollection creates a collection by replaying the create event and returns its id.
func (r *replayer) newCollection(t *testing.T, secret string) string {
	t.Helper()
	var out struct {
		ID string `json:"id"`
	}
	r.replayJSON(t, "collections-create-collection.json", map[string]string{placeholderKey: secret}, http.StatusCreated, &out)
	if out.ID == "" {
		t.Fatal("created collection without id")
	}
	return out.ID
}

// newKB creates a knowledge base of the file by replaying the create event and waits, replaying
// the status event, until its ingestion has completed.
func (r *replayer) newKB(t *testing.T, secret, fileID string) string {
	t.Helper()
	var out struct {
		ID string `json:"id"`
	}
	r.replayJSON(t, "knowledge-create-knowledge-base.json", map[string]string{placeholderKey: secret, placeholderFile: fileID}, http.StatusCreated, &out)
	if out.ID == "" {
		t.Fatal("created knowledge base without id")
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var st struct {
			KnowledgeBase struct {
				Status string `json:"status"`
			} `json:"knowledge_base"`
		}
		r.replayJSON(t, "knowledge-check-status.json", map[string]string{placeholderKey: secret, placeholderKB: out.ID}, http.StatusOK, &st)
		switch st.KnowledgeBase.Status {
		case "completed":
			return out.ID
		case "failed":
			t.Fatalf("knowledge base %s failed", out.ID)
		}
		if time.Now().After(deadline) {
			t.Fatalf("knowledge base %s still %s after a minute", out.ID, st.KnowledgeBase.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// newSession creates a session by replaying the create event and returns its id.
func (r *replayer) newSession(t *testing.T, secret string) string {
	t.Helper()
	var out struct {
		SessionID string `json:"session_id"`
	}
	r.replayJSON(t, "sessions-create-session.json", map[string]string{placeholderKey: secret}, http.StatusCreated, &out)
	if out.SessionID == "" {
		t.Fatal("created session without session_id")
	}
	return out.SessionID
}

// execute runs the execute event in a session (on the local model, the default provider outside
// Lambda) and returns the id of the first new message and of the execution.
func (r *replayer) execute(t *testing.T, secret, sessionID string) (messageID, executionID string) {
	t.Helper()
	var out struct {
		Messages []struct {
			ID string `json:"id"`
		} `json:"messages"`
		Metadata struct {
			ExecutionID string `json:"execution_id"`
		} `json:"metadata"`
	}
	vars := map[string]string{placeholderKey: secret, placeholderSession: sessionID}
	r.replayJSON(t, "runtime-execute.json", vars, http.StatusOK, &out)
	if len(out.Messages) == 0 || out.Messages[0].ID == "" || out.Metadata.ExecutionID == "" {
		t.Fatalf("execute result without a message or an execution id: %+v", out)
	}
	return out.Messages[0].ID, out.Metadata.ExecutionID
}

// replay fills the placeholders in, runs the event and returns the status, headers and decoded
// body.
func (r *replayer) replay(t *testing.T, dir string, raw []byte, vars map[string]string) (int, http.Header, []byte) {
	t.Helper()
	s := string(raw)
	for k, v := range vars {
		s = strings.ReplaceAll(s, k, v)
	}
	if left := placeholder.FindString(s); left != "" {
		t.Fatalf("placeholder %s left unfilled", left)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal([]byte(s), &ev); err != nil {
		t.Fatal(err)
	}
	resp, err := r.handlers[dir](t.Context(), ev)
	if err != nil {
		t.Fatalf("handler returned an error (API Gateway would answer with its own 5xx): %v", err)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			t.Fatal(err)
		}
	}
	header := http.Header{}
	for k, v := range resp.Headers {
		header.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			header.Add(k, v)
		}
	}
	return resp.StatusCode, header, body
}

// newWebhook creates a webhook by replaying the create event and returns its id.
func (r *replayer) newWebhook(t *testing.T, secret string) string {
	t.Helper()
	var out struct {
		ID string `json:"id"`
	}
	r.replayJSON(t, "webhooks-create-webhook.json", map[string]string{placeholderKey: secret}, http.StatusCreated, &out)
	if out.ID == "" {
		t.Fatalf("created webhook without id: %+v", out)
	}
	return out.ID
}

// newDelivery records a delivery of the webhook as the delivery function's fan-out would, and
// returns its id.
func (r *replayer) newDelivery(t *testing.T, secret, webhookID string) string {
	t.Helper()
	p, err := r.app.Auth.Authenticate(t.Context(), secret, "")
	if err != nil {
		t.Fatal(err)
	}
	d := &domain.WebhookDelivery{ID: "msg_" + strings.ReplaceAll(uuid.NewString(), "-", ""), WebhookID: webhookID, Company: p.Company,
		EventType: domain.EventExecutionCompleted, Payload: []byte(`{}`), Status: domain.DeliveryFailed,
		Attempts: []domain.WebhookAttempt{}, CreatedAt: time.Now().UTC()}
	if err := r.app.Store.CreateDelivery(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// mcpURL is the address of an MCP server for the events (infra/mcptest, started once per test).
// Its host is loopback, which the local configuration allows (MCP_ALLOWED_HOSTS).
func (r *replayer) mcpURL(t *testing.T) string {
	t.Helper()
	base, stop, err := mcptest.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return base + mcptest.PathMCP
}

// mcpOAuthURL serves the test tools behind OAuth (with their authorization server) and
// returns their MCP URL.
func (r *replayer) mcpOAuthURL(t *testing.T) string {
	t.Helper()
	as := &mcptest.OAuthServer{}
	hs := httptest.NewServer(as.Handler())
	t.Cleanup(hs.Close)
	as.Base = hs.URL
	return hs.URL + mcptest.PathOAuthMCP
}

// newOAuthMCPServer registers a server behind OAuth by replaying its create event.
func (r *replayer) newOAuthMCPServer(t *testing.T, secret, url string) string {
	t.Helper()
	var out struct {
		ID string `json:"id"`
	}
	r.replayJSON(t, "mcpservers-create-oauth-mcp-server.json", map[string]string{placeholderKey: secret, placeholderMCPOAuthURL: url}, http.StatusCreated, &out)
	return out.ID
}

// authorizeMCPServer starts the authorization of server id by replaying its event, and lets the
// authorization server redirect at once: the code and state the redirect carries.
func (r *replayer) authorizeMCPServer(t *testing.T, secret, id string) (code, state string) {
	t.Helper()
	var out struct {
		URL string `json:"authorization_url"`
	}
	r.replayJSON(t, "mcpservers-authorize-mcp-server.json", map[string]string{placeholderKey: secret, placeholderMCPOAuthServer: id}, http.StatusOK, &out)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(out.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("authorization: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query().Get("code"), loc.Query().Get("state")
}

// newMCPServer registers an MCP server by replaying the create event and returns its id.
func (r *replayer) newMCPServer(t *testing.T, secret, url string) string {
	t.Helper()
	var out struct {
		ID string `json:"id"`
	}
	r.replayJSON(t, "mcpservers-create-mcp-server.json", map[string]string{placeholderKey: secret, placeholderMCPURL: url}, http.StatusCreated, &out)
	if out.ID == "" {
		t.Fatalf("registered MCP server without id: %+v", out)
	}
	return out.ID
}
