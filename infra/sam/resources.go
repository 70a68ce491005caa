package sam

import (
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Resource types this package reads.
const (
	TypeFunction = "AWS::Serverless::Function"
	TypeHTTPAPI  = "AWS::Serverless::HttpApi"
	TypeTable    = "AWS::DynamoDB::Table"
	TypeQueue    = "AWS::SQS::Queue"
	TypeBucket   = "AWS::S3::Bucket"
)

// DefaultRoute is the path of the HTTP API catch-all route.
const DefaultRoute = "$default"

// Route is one HttpApi event of a function. Method is upper case ("ANY" stays "ANY"); Path is
// as written in the template, DefaultRoute for the catch-all.
type Route struct {
	Method, Path string
}

// Function is an AWS::Serverless::Function with its Globals merged in.
type Function struct {
	LogicalID string
	CodeURI   string
	Dir       string   // the function's directory under functions/, e.g. "agents"
	Routes    []Route  // explicit routes, in event-name order
	Fallbacks []Route  // events named Fallback… or with Method ANY
	Queues    []string // logical ids of the SQS queues it consumes
	SQSEvents []SQSEvent
	// Schedules are the expressions of its Schedule events ("rate(1 minute)"), in event-name order.
	Schedules []string
	Timeout   int // seconds, Globals merged; 0 when unset (Lambda then uses 3)
	// URL is the function's FunctionUrlConfig, nil without one: a function behind its own
	// function URL rather than the HTTP API.
	URL *FunctionURL
}

// FunctionURL is a function's FunctionUrlConfig. SAM makes of it an AWS::Lambda::Url named
// URLLogicalID (and, for AuthType NONE, the permission that opens it to the public).
type FunctionURL struct {
	AuthType   string // AWS_IAM or NONE
	InvokeMode string // BUFFERED (also when unset) or RESPONSE_STREAM
}

// InvokeModeStream is the invoke mode of a function URL whose responses stream.
const InvokeModeStream = "RESPONSE_STREAM"

// Streams reports whether the function is behind a function URL whose responses stream.
func (f Function) Streams() bool { return f.URL != nil && f.URL.InvokeMode == InvokeModeStream }

// URLLogicalID is the logical id of the AWS::Lambda::Url SAM generates for the function's
// FunctionUrlConfig (what !GetAtt <id>.FunctionUrl names).
func (f Function) URLLogicalID() string { return f.LogicalID + "Url" }

// SQSEvent is an SQS event source of a function: what Lambda's event source mapping is told.
type SQSEvent struct {
	Name                    string // the event's name in the template
	Queue                   string // logical id of the queue
	BatchSize               int    // 0 when unset (Lambda then uses 10)
	MaxBatchingWindow       int    // seconds (MaximumBatchingWindowInSeconds)
	ReportBatchItemFailures bool   // FunctionResponseTypes holds ReportBatchItemFailures
	MaximumConcurrency      int    // ScalingConfig.MaximumConcurrency; 0 when unset
	Disabled                bool   // Enabled: false
}

// Table is an AWS::DynamoDB::Table's key design.
type Table struct {
	LogicalID         string
	HashKey, RangeKey string
	Attributes        map[string]string // name -> S|N|B
	GSIs              []Index
	TTLAttribute      string // empty unless TTL is enabled
}

// Index is a global secondary index.
type Index struct {
	Name, HashKey, RangeKey, Projection string
}

// Queue is an AWS::SQS::Queue.
type Queue struct {
	LogicalID         string
	VisibilityTimeout int    // seconds; 0 when unset (SQS then uses 30)
	DeadLetterTarget  string // logical id of the redrive target, empty without one
	MaxReceiveCount   int
	FIFO              bool
}

// Bucket is an AWS::S3::Bucket's expiry rules.
type Bucket struct {
	LogicalID      string
	ExpirePrefixes map[string]int // prefix -> days, for enabled rules with ExpirationInDays
}

// Properties returns a resource's properties with the Globals section of its type merged in by
// SAM's rules: the resource wins for scalars, maps merge key by key, lists are concatenated
// (globals first). It returns nil for an unknown logical id.
func (t *Template) Properties(logicalID string) map[string]any {
	r, ok := t.Resources[logicalID]
	if !ok {
		return nil
	}
	kind, ok := strings.CutPrefix(r.Type, "AWS::Serverless::")
	if !ok {
		return r.Properties
	}
	g, _ := t.Globals[kind].(map[string]any)
	if len(g) == 0 {
		return r.Properties
	}
	merged, _ := mergeGlobals(g, r.Properties).(map[string]any)
	return merged
}

func mergeGlobals(global, local any) any {
	switch g := global.(type) {
	case map[string]any:
		l, ok := local.(map[string]any)
		if !ok || isIntrinsic(g) || isIntrinsic(l) {
			return local
		}
		out := maps.Clone(g)
		for k, v := range l {
			if gv, ok := out[k]; ok {
				out[k] = mergeGlobals(gv, v)
			} else {
				out[k] = v
			}
		}
		return out
	case []any:
		if l, ok := local.([]any); ok {
			return append(slices.Clone(g), l...)
		}
	}
	return local
}

// isIntrinsic reports whether m is an intrinsic function call such as {"Ref": …}; SAM does not
// merge into those.
func isIntrinsic(m map[string]any) bool {
	if len(m) != 1 {
		return false
	}
	for k := range m {
		return k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::")
	}
	return false
}

// Functions lists the template's functions, sorted by logical id.
func (t *Template) Functions() []Function {
	var out []Function
	for _, id := range t.ids(TypeFunction) {
		p := t.Properties(id)
		f := Function{LogicalID: id}
		f.Timeout, _ = integer(p["Timeout"])
		if uri, ok := p["CodeUri"].(string); ok {
			f.CodeURI = uri
			f.Dir = path.Base(path.Clean(strings.TrimSpace(uri)))
		}
		if f.Dir == "." {
			// The makefile build method builds from the repository root (CodeUri "."): the
			// directory is named by the logical id, AgentsFunction → functions/agents.
			f.Dir = strings.ToLower(strings.TrimSuffix(id, "Function"))
		}
		if u, ok := p["FunctionUrlConfig"].(map[string]any); ok {
			f.URL = &FunctionURL{InvokeMode: "BUFFERED"}
			f.URL.AuthType, _ = u["AuthType"].(string)
			if m, ok := u["InvokeMode"].(string); ok && m != "" {
				f.URL.InvokeMode = m
			}
		}
		events, _ := p["Events"].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(events)) {
			ev, _ := events[name].(map[string]any)
			props, _ := ev["Properties"].(map[string]any)
			switch ev["Type"] {
			case "HttpApi":
				r := httpRoute(props)
				if strings.HasPrefix(name, "Fallback") || r.Method == "ANY" {
					f.Fallbacks = append(f.Fallbacks, r)
				} else {
					f.Routes = append(f.Routes, r)
				}
			case "Schedule", "ScheduleV2":
				if expr, ok := props["Schedule"].(string); ok {
					f.Schedules = append(f.Schedules, expr)
				} else if expr, ok := props["ScheduleExpression"].(string); ok {
					f.Schedules = append(f.Schedules, expr)
				}
			case "SQS":
				if q := refID(props["Queue"]); q != "" {
					f.Queues = append(f.Queues, q)
					f.SQSEvents = append(f.SQSEvents, sqsEvent(name, q, props))
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// sqsEvent reads an SQS event's properties.
func sqsEvent(name, queue string, props map[string]any) SQSEvent {
	ev := SQSEvent{Name: name, Queue: queue}
	ev.BatchSize, _ = integer(props["BatchSize"])
	ev.MaxBatchingWindow, _ = integer(props["MaximumBatchingWindowInSeconds"])
	for _, t := range list(props["FunctionResponseTypes"]) {
		if t == "ReportBatchItemFailures" {
			ev.ReportBatchItemFailures = true
		}
	}
	if sc, ok := props["ScalingConfig"].(map[string]any); ok {
		ev.MaximumConcurrency, _ = integer(sc["MaximumConcurrency"])
	}
	if e, ok := props["Enabled"]; ok && !truthy(e) {
		ev.Disabled = true
	}
	return ev
}

// httpRoute reads an HttpApi event; with neither Path nor Method SAM makes it the catch-all.
func httpRoute(props map[string]any) Route {
	m, _ := props["Method"].(string)
	p, _ := props["Path"].(string)
	m = strings.ToUpper(strings.TrimSpace(m))
	if m == "" || m == "X-AMAZON-APIGATEWAY-ANY-METHOD" {
		m = "ANY"
	}
	if p == "" {
		p = DefaultRoute
	}
	return Route{Method: m, Path: p}
}

// Tables lists the template's DynamoDB tables, sorted by logical id.
func (t *Template) Tables() []Table {
	var out []Table
	for _, id := range t.ids(TypeTable) {
		p := t.Resources[id].Properties
		tb := Table{LogicalID: id, Attributes: map[string]string{}}
		tb.HashKey, tb.RangeKey = keySchema(p["KeySchema"])
		for _, a := range list(p["AttributeDefinitions"]) {
			m, _ := a.(map[string]any)
			name, _ := m["AttributeName"].(string)
			typ, _ := m["AttributeType"].(string)
			if name != "" {
				tb.Attributes[name] = typ
			}
		}
		for _, g := range list(p["GlobalSecondaryIndexes"]) {
			m, _ := g.(map[string]any)
			ix := Index{}
			ix.Name, _ = m["IndexName"].(string)
			ix.HashKey, ix.RangeKey = keySchema(m["KeySchema"])
			proj, _ := m["Projection"].(map[string]any)
			ix.Projection, _ = proj["ProjectionType"].(string)
			tb.GSIs = append(tb.GSIs, ix)
		}
		if ttl, ok := p["TimeToLiveSpecification"].(map[string]any); ok && truthy(ttl["Enabled"]) {
			tb.TTLAttribute, _ = ttl["AttributeName"].(string)
		}
		out = append(out, tb)
	}
	return out
}

func keySchema(v any) (hash, rng string) {
	for _, k := range list(v) {
		m, _ := k.(map[string]any)
		name, _ := m["AttributeName"].(string)
		switch m["KeyType"] {
		case "HASH":
			hash = name
		case "RANGE":
			rng = name
		}
	}
	return hash, rng
}

// Queues lists the template's SQS queues, sorted by logical id.
func (t *Template) Queues() []Queue {
	var out []Queue
	for _, id := range t.ids(TypeQueue) {
		p := t.Resources[id].Properties
		q := Queue{LogicalID: id, FIFO: truthy(p["FifoQueue"])}
		q.VisibilityTimeout, _ = integer(p["VisibilityTimeout"])
		if rp, ok := p["RedrivePolicy"].(map[string]any); ok {
			q.DeadLetterTarget = refID(rp["deadLetterTargetArn"])
			q.MaxReceiveCount, _ = integer(rp["maxReceiveCount"])
		}
		out = append(out, q)
	}
	return out
}

// Buckets lists the template's S3 buckets, sorted by logical id.
func (t *Template) Buckets() []Bucket {
	var out []Bucket
	for _, id := range t.ids(TypeBucket) {
		p := t.Resources[id].Properties
		b := Bucket{LogicalID: id, ExpirePrefixes: map[string]int{}}
		lc, _ := p["LifecycleConfiguration"].(map[string]any)
		for _, r := range list(lc["Rules"]) {
			m, _ := r.(map[string]any)
			days, ok := integer(m["ExpirationInDays"])
			if m["Status"] != "Enabled" || !ok {
				continue
			}
			prefix, _ := m["Prefix"].(string)
			b.ExpirePrefixes[prefix] = days
		}
		out = append(out, b)
	}
	return out
}

// ids lists the logical ids of the resources of one type, sorted.
func (t *Template) ids(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// refID is the logical id an intrinsic points at: {"Ref": X} or {"Fn::GetAtt": [X, …]}.
func refID(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	if r, ok := m["Ref"].(string); ok {
		return r
	}
	if ga, ok := m["Fn::GetAtt"].([]any); ok && len(ga) > 0 {
		s, _ := ga[0].(string)
		return s
	}
	return ""
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// integer reads a whole number written as a YAML number or a numeric string.
func integer(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		if n == float64(int(n)) {
			return int(n), true
		}
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(n))
		return i, err == nil
	}
	return 0, false
}

// truthy reads a boolean written as a YAML bool or the string "true".
func truthy(v any) bool {
	switch b := v.(type) {
	case bool:
		return b
	case string:
		return strings.EqualFold(b, "true")
	}
	return false
}
