package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentorch/agentorch/shared/domain"
)

// Tracing is how an engine records its runs as OpenTelemetry spans, after the GenAI semantic
// conventions (docs/observability.md): invoke_agent for the run and for each node run, chat
// {model} for each model call, execute_tool {tool} for each tool call and retrieval {knowledge
// bases} for each search. Message content goes into spans, and prompts into model_call events,
// only with CaptureContent. The engine imports the OpenTelemetry API alone: the SDK and its
// exporter are the wiring's (shared/telemetry).
type Tracing struct {
	// Provider makes the engine's tracer; nil records nothing (a no-op tracer).
	Provider trace.TracerProvider
	// CaptureContent records prompts, outputs, tool arguments and results in spans, and the
	// prompts in model_call events (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT).
	CaptureContent bool
	// Flush, when set, is called as each run ends, after its spans ended: a Lambda function's
	// process is frozen once its handler returns, and spans still in a batch would wait for the
	// next invocation, or be lost.
	Flush func(context.Context) error
}

// TraceInfo names what a run's invoke_agent span is about.
type TraceInfo struct {
	// ConversationID is gen_ai.conversation.id: the session.
	ConversationID string
	// AgentID and AgentName are the agent the session runs (gen_ai.agent.*).
	AgentID, AgentName string
	// ExecutionID names the execution the run is part of.
	ExecutionID string
}

// tracerName is the engine's instrumentation scope.
const tracerName = "github.com/agentorch/agentorch/shared/engine"

// WithTracing returns a copy of e that records its runs with t.
func (e *Engine) WithTracing(t Tracing) *Engine {
	cp := *e
	cp.tracing = t
	if t.Provider != nil {
		cp.tracer = t.Provider.Tracer(tracerName)
	}
	return &cp
}

// off is the span of an engine that does not trace: ctx is left as it is, so the caller's span
// context (a traceparent received) still goes on to MCP servers, and nothing is built for the
// span (an execute pays nothing for tracing off; BenchmarkEngineOverhead).
func off(ctx context.Context) (context.Context, trace.Span) { return ctx, noop.Span{} }

// GenAI semantic-convention attribute keys.
const (
	attrOperation      = "gen_ai.operation.name"
	attrProvider       = "gen_ai.provider.name"
	attrSystem         = "gen_ai.system" // the name before gen_ai.provider.name, which some backends still read
	attrRequestModel   = "gen_ai.request.model"
	attrMaxTokens      = "gen_ai.request.max_tokens"
	attrTemperature    = "gen_ai.request.temperature"
	attrTopP           = "gen_ai.request.top_p"
	attrInputTokens    = "gen_ai.usage.input_tokens"
	attrOutputTokens   = "gen_ai.usage.output_tokens"
	attrFinishReasons  = "gen_ai.response.finish_reasons"
	attrAgentName      = "gen_ai.agent.name"
	attrAgentID        = "gen_ai.agent.id"
	attrConversation   = "gen_ai.conversation.id"
	attrToolName       = "gen_ai.tool.name"
	attrToolCallID     = "gen_ai.tool.call.id"
	attrToolType       = "gen_ai.tool.type"
	attrToolArgs       = "gen_ai.tool.call.arguments"
	attrToolResult     = "gen_ai.tool.call.result"
	attrDataSource     = "gen_ai.data_source.id"
	attrRetrievalTopK  = "gen_ai.retrieval.top_k"
	attrRetrievalQuery = "gen_ai.retrieval.query.text"
	attrRetrievalDocs  = "gen_ai.retrieval.documents"
	attrSystemInstr    = "gen_ai.system_instructions"
	attrInputMessages  = "gen_ai.input.messages"
	attrOutputMessages = "gen_ai.output.messages"
	attrErrorType      = "error.type"
	attrExecutionID    = "agentorch.execution.id"
	attrNode           = "agentorch.node"
	attrMCPServer      = "agentorch.mcp.server"
)

// providerName is a provider as gen_ai.provider.name names it.
func providerName(p string) string {
	switch p {
	case "bedrock":
		return "aws.bedrock"
	case "":
		return "unknown"
	}
	return p
}

// resolvedProvider is the provider a node's "" means in e's model set.
func (e *Engine) resolvedProvider(p string) string {
	if ms, ok := e.models.(ModelSet); ok && p == "" {
		return ms.Default
	}
	return p
}

// toolType is a tool's kind as gen_ai.tool.type names it: a tool the service or the client runs
// is a function, an MCP server's an extension.
func toolType(kind string) string {
	if kind == domain.ToolKindMCP {
		return "extension"
	}
	return "function"
}

// endSpan sets span's status from err (error.type the error's kind) and ends it.
func endSpan(span trace.Span, err error) {
	if err != nil {
		typ := domain.KindOf(err).Type()
		if errors.Is(err, context.Canceled) {
			typ = "cancelled"
		} else if errors.Is(err, context.DeadlineExceeded) {
			typ = "timeout"
		}
		span.SetAttributes(attribute.String(attrErrorType, typ))
		span.SetStatus(codes.Error, domain.Clip(err.Error(), 256))
	}
	span.End()
}

// jsonAttr is v as a JSON string attribute (the conventions' structured content attributes).
func jsonAttr(key string, v any) attribute.KeyValue {
	b, err := json.Marshal(v)
	if err != nil {
		return attribute.String(key, "")
	}
	return attribute.String(key, string(b))
}

// maxSpanContent bounds one content attribute's text, in bytes: backends drop oversized spans.
const maxSpanContent = 16 << 10

// semconvPart is a message part as the conventions' input and output message schema has it.
type semconvPart struct {
	Type      string         `json:"type"`
	Content   string         `json:"content,omitempty"`
	ID        string         `json:"id,omitempty"`
	Name      string         `json:"name,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Result    string         `json:"result,omitempty"`
}

type semconvMessage struct {
	Role         string        `json:"role"`
	Parts        []semconvPart `json:"parts"`
	FinishReason string        `json:"finish_reason,omitempty"`
}

// semconvMessages is turns in the conventions' message schema; media are named, not sent.
func semconvMessages(turns []domain.Turn) []semconvMessage {
	out := make([]semconvMessage, 0, len(turns))
	for _, t := range turns {
		m := semconvMessage{Role: t.Role, Parts: []semconvPart{}}
		for _, p := range t.Parts {
			switch {
			case p.Type == domain.PartText:
				m.Parts = append(m.Parts, semconvPart{Type: "text", Content: domain.Clip(p.Text, maxSpanContent)})
			case p.ToolUse != nil:
				m.Parts = append(m.Parts, semconvPart{Type: "tool_call", ID: p.ToolUse.ID, Name: p.ToolUse.Name, Arguments: p.ToolUse.Input})
			case p.ToolResult != nil:
				m.Role = "tool"
				m.Parts = append(m.Parts, semconvPart{Type: "tool_call_response", ID: p.ToolResult.ToolUseID,
					Result: domain.Clip(p.ToolResult.Content, maxSpanContent)})
			case p.Image != nil || p.Document != nil:
				m.Parts = append(m.Parts, semconvPart{Type: "blob"})
			}
		}
		out = append(out, m)
	}
	return out
}

// maxEventPrompt bounds, under the content opt-in, the system prompt a model_call event quotes
// and each message of its input_messages; maxEventMessages bounds how many of the last
// messages it quotes.
const (
	maxEventPrompt   = 2000
	maxEventMessages = 10
)

// promptData is what a model_call event says of the request under the content opt-in: the
// system prompt and the last maxEventMessages messages, as role and text.
func promptData(req domain.ModelRequest) map[string]any {
	turns := req.Turns
	if len(turns) > maxEventMessages {
		turns = turns[len(turns)-maxEventMessages:]
	}
	msgs := make([]map[string]any, 0, len(turns))
	for _, t := range turns {
		var b strings.Builder
		for _, p := range t.Parts {
			s := ""
			switch {
			case p.Type == domain.PartText:
				s = p.Text
			case p.ToolUse != nil:
				args, _ := json.Marshal(p.ToolUse.Input)
				s = "[tool call " + p.ToolUse.Name + " " + string(args) + "]"
			case p.ToolResult != nil:
				s = "[tool result " + p.ToolResult.ToolUseID + "] " + p.ToolResult.Content
			case p.Image != nil:
				s = "[image]"
			case p.Document != nil:
				s = "[document " + p.Document.Name + "]"
			}
			if s == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(s)
		}
		msgs = append(msgs, map[string]any{"role": t.Role, "text": domain.Clip(b.String(), maxEventPrompt)})
	}
	return map[string]any{"system": domain.Clip(req.System, maxEventPrompt), "messages": msgs}
}

// startRun starts a run's invoke_agent span, a child of the span ctx carries (a traceparent
// the caller sent, or the worker's job's).
func (e *Engine) startRun(ctx context.Context, run Run) (context.Context, trace.Span) {
	if e.tracer == nil {
		return off(ctx)
	}
	ti := run.Trace
	name := ti.AgentName
	if name == "" && run.Graph != nil && len(run.Graph.Order) == 1 {
		name = run.Graph.Order[0]
	}
	attrs := []attribute.KeyValue{attribute.String(attrOperation, "invoke_agent")}
	for _, kv := range [][2]string{{attrAgentName, name}, {attrAgentID, ti.AgentID}, {attrConversation, ti.ConversationID}, {attrExecutionID, ti.ExecutionID}} {
		if kv[1] != "" {
			attrs = append(attrs, attribute.String(kv[0], kv[1]))
		}
	}
	return e.tracer.Start(ctx, strings.TrimSpace("invoke_agent "+name),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// endRun ends the run's span with its usage and outcome, then flushes the spans.
func (e *Engine) endRun(ctx context.Context, span trace.Span, res *Result, err error) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.Int(attrInputTokens, res.Usage.InputTokens), attribute.Int(attrOutputTokens, res.Usage.OutputTokens),
		attribute.StringSlice(attrFinishReasons, []string{res.StopReason}))
	endSpan(span, err)
	if e.tracing.Flush != nil {
		_ = e.tracing.Flush(ctx) // an export that fails loses spans, never the run
	}
}

// startNode starts a node run's invoke_agent span.
func (e *Engine) startNode(ctx context.Context, n *Node) (context.Context, trace.Span) {
	if e.tracer == nil {
		return off(ctx)
	}
	attrs := []attribute.KeyValue{attribute.String(attrOperation, "invoke_agent"), attribute.String(attrAgentName, n.Name),
		attribute.String(attrNode, n.Name)}
	if p := e.resolvedProvider(n.Provider); p != "" {
		attrs = append(attrs, attribute.String(attrProvider, providerName(p)))
	}
	if n.Model != "" {
		attrs = append(attrs, attribute.String(attrRequestModel, n.Model))
	}
	return e.tracer.Start(ctx, "invoke_agent "+n.Name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// endNode ends a node run's span with its usage and stop reason.
func endNode(span trace.Span, o *outcome, err error) {
	if !span.IsRecording() {
		return
	}
	if o != nil {
		span.SetAttributes(attribute.Int(attrInputTokens, o.usage.InputTokens), attribute.Int(attrOutputTokens, o.usage.OutputTokens))
		if o.stopReason != "" {
			span.SetAttributes(attribute.StringSlice(attrFinishReasons, []string{o.stopReason}))
		}
	}
	endSpan(span, err)
}

// startChat starts a model call's chat {model} span.
func (c *call) startChat(ctx context.Context) (context.Context, trace.Span) {
	if c.e.tracer == nil {
		return off(ctx)
	}
	provider := providerName(c.e.resolvedProvider(c.req.Provider))
	model := c.req.Model
	if model == "" {
		model = c.e.defaultModel(c.req.Provider)
	}
	attrs := []attribute.KeyValue{attribute.String(attrOperation, "chat"), attribute.String(attrProvider, provider),
		attribute.String(attrSystem, provider), attribute.String(attrAgentName, c.node.Name), attribute.Int(attrMaxTokens, c.req.MaxTokens)}
	if model != "" {
		attrs = append(attrs, attribute.String(attrRequestModel, model))
	}
	if c.req.Temperature != nil {
		attrs = append(attrs, attribute.Float64(attrTemperature, *c.req.Temperature))
	}
	if c.req.TopP != nil {
		attrs = append(attrs, attribute.Float64(attrTopP, *c.req.TopP))
	}
	if c.e.tracing.CaptureContent {
		if c.req.System != "" {
			attrs = append(attrs, jsonAttr(attrSystemInstr, []semconvPart{{Type: "text", Content: domain.Clip(c.req.System, maxSpanContent)}}))
		}
		attrs = append(attrs, jsonAttr(attrInputMessages, semconvMessages(c.req.Turns)))
	}
	return c.e.tracer.Start(ctx, strings.TrimSpace("chat "+model), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endChat ends a model call's span with its usage, stop reason and (opted in) output.
func (c *call) endChat(span trace.Span, resp *domain.ModelResponse, err error) {
	if !span.IsRecording() {
		return
	}
	if resp != nil {
		span.SetAttributes(attribute.Int(attrInputTokens, resp.Usage.InputTokens), attribute.Int(attrOutputTokens, resp.Usage.OutputTokens),
			attribute.StringSlice(attrFinishReasons, []string{resp.StopReason}))
		if c.e.tracing.CaptureContent {
			out := semconvMessages([]domain.Turn{{Role: domain.RoleAssistant, Parts: resp.Parts}})
			out[0].FinishReason = resp.StopReason
			span.SetAttributes(jsonAttr(attrOutputMessages, out))
		}
	}
	endSpan(span, err)
}

// startTool starts a tool call's execute_tool {tool} span.
func (c *call) startTool(ctx context.Context, u *domain.ToolUse) (context.Context, trace.Span) {
	if c.e.tracer == nil {
		return off(ctx)
	}
	meta := c.meta(u.Name)
	attrs := []attribute.KeyValue{attribute.String(attrOperation, "execute_tool"), attribute.String(attrToolName, u.Name),
		attribute.String(attrToolCallID, u.ID), attribute.String(attrToolType, toolType(meta.Kind))}
	if meta.Server != "" {
		attrs = append(attrs, attribute.String(attrMCPServer, meta.Server))
	}
	if c.e.tracing.CaptureContent {
		attrs = append(attrs, jsonAttr(attrToolArgs, u.Input))
	}
	return c.e.tracer.Start(ctx, "execute_tool "+u.Name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// endTool ends a tool call's span with (opted in) its result.
func (c *call) endTool(span trace.Span, out string, err error) {
	if !span.IsRecording() {
		return
	}
	if err == nil && c.e.tracing.CaptureContent {
		span.SetAttributes(attribute.String(attrToolResult, domain.Clip(out, maxSpanContent)))
	}
	endSpan(span, err)
}

// defaultModel is the model a provider uses when a node names none, when the provider says.
func (e *Engine) defaultModel(provider string) string {
	m, err := e.models.Model(provider)
	if err != nil {
		return ""
	}
	if d, ok := m.(interface{ DefaultModel() string }); ok {
		return d.DefaultModel()
	}
	return ""
}

// chunkData is what a retrieval event says of the passages given to the model: each chunk's
// number, id, knowledge base, file, index and score; never its text.
func chunkData(ps []passage) []map[string]any {
	out := make([]map[string]any, len(ps))
	for i, p := range ps {
		out[i] = map[string]any{"index": p.index, "id": hitKey(p.hit), "knowledge_base_id": p.hit.KBID,
			"file_id": p.hit.FileID, "chunk_index": p.hit.ChunkIndex, "score": p.hit.Score}
	}
	return out
}

// startRetrieval starts a search's retrieval span; the query is content (opt-in only).
func (c *call) startRetrieval(ctx context.Context, query string, kbs []string, topK int) (context.Context, trace.Span) {
	if c.e.tracer == nil {
		return off(ctx)
	}
	source := strings.Join(kbs, ",")
	attrs := []attribute.KeyValue{attribute.String(attrOperation, "retrieval"), attribute.String(attrDataSource, source),
		attribute.String(attrAgentName, c.node.Name)}
	if topK > 0 {
		attrs = append(attrs, attribute.Int(attrRetrievalTopK, topK))
	}
	if c.e.tracing.CaptureContent {
		attrs = append(attrs, attribute.String(attrRetrievalQuery, domain.Clip(query, maxSpanContent)))
	}
	return c.e.tracer.Start(ctx, "retrieval "+source, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// retrievedDoc is a passage as gen_ai.retrieval.documents lists it: id and score, and its text
// only under the content opt-in.
type retrievedDoc struct {
	ID      string  `json:"id"`
	Score   float64 `json:"score"`
	Content string  `json:"content,omitempty"`
}

// memorySource is the data source of memory's retrieval spans ("retrieval memory"): the user's
// memory, never named by its user (an end user's id is the company's data).
const memorySource = "memory"

// endRecall ends a memory search's span with the records it found.
func (c *call) endRecall(span trace.Span, hits []domain.MemoryHit, err error) {
	if !span.IsRecording() {
		return
	}
	if err == nil {
		docs := make([]retrievedDoc, len(hits))
		for i, h := range hits {
			docs[i] = retrievedDoc{ID: h.Record.ID, Score: h.Score}
			if c.e.tracing.CaptureContent {
				docs[i].Content = domain.Clip(h.Record.Text, maxSpanContent)
			}
		}
		span.SetAttributes(jsonAttr(attrRetrievalDocs, docs))
	}
	endSpan(span, err)
}

// endRetrieval ends a search's span with the chunks it gave the model.
func (c *call) endRetrieval(span trace.Span, ps []passage, err error) {
	if !span.IsRecording() {
		return
	}
	if err == nil {
		docs := make([]retrievedDoc, len(ps))
		for i, p := range ps {
			docs[i] = retrievedDoc{ID: hitKey(p.hit), Score: p.hit.Score}
			if c.e.tracing.CaptureContent {
				docs[i].Content = domain.Clip(p.hit.Text, maxSpanContent)
			}
		}
		span.SetAttributes(jsonAttr(attrRetrievalDocs, docs))
	}
	endSpan(span, err)
}
