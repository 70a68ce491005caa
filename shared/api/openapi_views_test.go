package api

import (
	"encoding"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/agentorch/agentorch/shared/memory"
)

// jsonTypes holds every struct type of this package that goes over the wire as JSON to the schema
// that openapi.yaml gives it: the views written to clients and the request bodies decoded. A
// struct type reached from one of these (a field's type, an element's) is checked against the
// schema of that property and needs no entry of its own. Adding a view: add it here.
var jsonTypes = []struct {
	v      any
	schema string // a name under #/components/schemas
}{
	// Views.
	{agentJSON{}, "Agent"},
	{agentVersionJSON{}, "AgentVersion"},
	{feedbackJSON{}, "Feedback"},
	{auditEntryJSON{}, "AuditEntry"},
	{keyJSON{}, "ApiKeyCreated"}, // the key's fields, and the secret once (omitted after)
	{sessionView{}, "Session"},
	{messageView{}, "ResultMessage"},
	{mcpServerJSON{}, "MCPServer"},
	{mcpToolsJSON{}, "MCPTools"},
	{authorizationJSON{}, "MCPServerAuthorization"},
	{fileJSON{}, "File"},
	{webhookJSON{}, "Webhook"},
	{webhookSecretJSON{}, "WebhookWithSecret"},
	{deliveryJSON{}, "WebhookDelivery"},
	{memoryRecordJSON{}, "MemoryRecord"},
	{memoryBlockJSON{}, "MemoryBlock"},
	{forgetJSON{}, "MemoryForgotten"},
	{pendingUploadJSON{}, "PendingUpload"},
	{collectionJSON{}, "Collection"},
	{collectionDetailJSON{}, "CollectionDetail"},
	{bulkResultJSON{}, "BulkResult"},
	{addFilesResultJSON{}, "AddFilesResult"},
	{kbListJSON{}, "KnowledgeBase"},
	{kbDetailJSON{}, "KnowledgeBaseDetail"},
	{statusJSON{}, "KnowledgeBaseCheck"},
	{searchJSON{}, "SearchResult"},
	{chunkJSON{}, "Chunk"},
	{errorBody{}, "Error"},
	{validateJSON{}, "ValidateResult"},
	{catalogJSON{}, "AgentCatalog"},
	{healthJSON{}, "Health"},
	{tokenJSON{}, "TokenResponse"},
	{imageUploadJSON{}, "ImageUpload"},
	{sessionCreatedJSON{}, "SessionCreated"},
	{sessionFromAgentJSON{}, "SessionFromAgent"},
	{executeResultJSON{}, "ExecuteResult"},
	{usageReportJSON{}, "UsageReport"},
	{companyLimitsJSON{}, "CompanyLimits"},
	{executeMessageJSON{}, "ExecuteMessage"},
	{toolRunJSON{}, "ToolCall"},         // in an ExecuteMessage's response.tool_calls (a field of type any)
	{toolCallJSON{}, "PendingToolCall"}, // and the calls a paused run waits on, there as well
	{executionJSON{}, "Execution"},
	{executionSummaryJSON{}, "ExecutionSummary"},
	{messagesPageJSON{}, "MessageHistory"},
	{historyMessageJSON{}, "HistoryMessage"}, // the page's messages (encoded apart, as fitPage cut them)
	{sessionExecutionsPageJSON{}, "SessionExecutionList"},
	{eventsPageJSON{}, "EventList"},
	{runtimeEventJSON{}, "RuntimeEvent"},
	{textDeltaJSON{}, "TextDelta"},
	// Request bodies.
	{createKeyRequest{}, "ApiKeyCreate"},
	{limitsRequest{}, "LimitsChange"},
	{startUploadRequest{}, "StartUploadRequest"},
	{feedbackRequest{}, "FeedbackRequest"},
	{sessionPatchRequest{}, "SessionUpdate"},
	{executeBody{}, "ExecuteRequest"},
	{answerBody{}, "ExecuteRequest"}, // the body read again when it answers (execute.go)
	{authorizeJSON{}, "MCPServerAuthorize"},
	{callbackJSON{}, "MCPServerCallback"},
	{memory.RecordInput{}, "MemoryRecordCreate"},
	{memory.RecordUpdate{}, "MemoryRecordUpdate"},
	{memory.BlockInput{}, "MemoryBlockCreate"},
	{memory.BlockUpdate{}, "MemoryBlockUpdate"},
}

// TestJSONTypesMatchSchemas holds each type of jsonTypes to its schema in both directions: every
// member encoding/json writes or reads is a property of the schema, and every property of the
// schema (of any of its allOf, oneOf and anyOf branches) is a member, down through nested
// structs, pointers, slices and maps.
func TestJSONTypesMatchSchemas(t *testing.T) {
	doc := loadOpenAPI(t)
	for _, tc := range jsonTypes {
		typ := reflect.TypeOf(tc.v)
		t.Run(typ.Name(), func(t *testing.T) {
			ref := doc.Components.Schemas[tc.schema]
			if ref == nil || ref.Value == nil {
				t.Fatalf("no schema #/components/schemas/%s", tc.schema)
			}
			w := schemaWalk{reached: map[string]bool{}}
			w.compare(typ, ref.Value, tc.schema)
			for _, m := range w.mismatches {
				t.Error(m)
			}
		})
	}
}

// TestJSONTypesAllListed fails when a struct type of this package with json tags (parsed from its
// source files) is neither in jsonTypes nor reached from one of its entries: a view or request
// added without being held to the document.
func TestJSONTypesAllListed(t *testing.T) {
	declared := jsonTaggedStructs(t)
	if len(declared) == 0 {
		t.Fatal("found no struct type with json tags in the package's source")
	}
	doc := loadOpenAPI(t)
	w := schemaWalk{reached: map[string]bool{}}
	for _, tc := range jsonTypes {
		if ref := doc.Components.Schemas[tc.schema]; ref != nil && ref.Value != nil {
			w.compare(reflect.TypeOf(tc.v), ref.Value, tc.schema)
		}
	}
	for _, name := range declared {
		if !w.reached[name] {
			t.Errorf("%s has json tags but is not in jsonTypes (openapi_views_test.go), nor reached from a type there: add it with its schema", name)
		}
	}
}

// TestSchemaWalkFinds keeps the comparison honest: a field renamed on either side, a member
// missing from a nested object, and a struct reached through a slice are each found.
func TestSchemaWalkFinds(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData([]byte(`
openapi: 3.1.0
info: {title: t, version: "1"}
paths: {}
components:
  schemas:
    Outer:
      type: object
      allOf:
        - $ref: "#/components/schemas/Base"
      properties:
        inner: {type: array, items: {$ref: "#/components/schemas/Inner"}}
        named: {type: [string, "null"]}
    Base:
      type: object
      properties:
        id: {type: string}
        when: {type: string, format: date-time}
    Inner:
      type: object
      oneOf:
        - properties: {a: {type: string}}
        - properties: {b: {type: string}}
`))
	if err != nil {
		t.Fatal(err)
	}
	type inner struct {
		A string `json:"a"`
		C string `json:"c,omitempty"`
	}
	type base struct {
		ID string `json:"id"`
	}
	type outer struct {
		base
		When   time.Time `json:"when"`
		Inner  []*inner  `json:"inner"`
		Name   *string   `json:"name"`
		Hidden string    `json:"-"`
		hidden string
	}
	_ = outer{}.hidden
	w := schemaWalk{reached: map[string]bool{}}
	w.compare(reflect.TypeOf(outer{}), doc.Components.Schemas["Outer"].Value, "Outer")
	want := []string{
		"Outer.inner[].b: in the schema, not in inner",
		"Outer.inner[].c: in inner, not in the schema",
		"Outer.name: in outer, not in the schema",
		"Outer.named: in the schema, not in outer",
	}
	if !slices.Equal(w.mismatches, want) {
		t.Errorf("mismatches:\n%s\nwant:\n%s", strings.Join(w.mismatches, "\n"), strings.Join(want, "\n"))
	}
	if !w.reached["outer"] || !w.reached["inner"] || !w.reached["base"] {
		t.Errorf("reached %v, want outer, inner and base", w.reached)
	}
}

func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIYAML())
	if err != nil {
		t.Fatalf("load openapi.yaml: %v", err)
	}
	return doc
}

// schemaWalk compares Go types with schemas, collecting the mismatches and the names of the
// struct types of this package it went through.
type schemaWalk struct {
	mismatches []string
	reached    map[string]bool
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	apiPkgPath        = reflect.TypeFor[errorBody]().PkgPath()
)

// compare walks typ against s at path (the schema's name, then JSON member names; [] for an
// element, {} for a map value).
func (w *schemaWalk) compare(typ reflect.Type, s *openapi3.Schema, path string) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	// A type that encodes itself (time.Time, json.RawMessage …) has no members to compare.
	if typ.Implements(marshalerType) || reflect.PointerTo(typ).Implements(marshalerType) ||
		typ.Implements(textMarshalerType) || reflect.PointerTo(typ).Implements(textMarshalerType) {
		return
	}
	switch typ.Kind() {
	case reflect.Struct:
		w.compareObject(typ, s, path)
	case reflect.Slice, reflect.Array:
		if typ.Elem().Kind() == reflect.Uint8 {
			return // base64
		}
		if items := schemaItems(s); items != nil {
			w.compare(typ.Elem(), items, path+"[]")
		}
	case reflect.Map:
		if values := schemaValues(s); values != nil {
			w.compare(typ.Elem(), values, path+"{}")
		}
	}
}

func (w *schemaWalk) compareObject(typ reflect.Type, s *openapi3.Schema, path string) {
	if typ.PkgPath() == apiPkgPath && typ.Name() != "" {
		w.reached[typ.Name()] = true
	}
	for _, emb := range embeddedStructs(typ) {
		if emb.PkgPath() == apiPkgPath && emb.Name() != "" {
			w.reached[emb.Name()] = true
		}
	}
	members := jsonMembers(typ)
	props := schemaProperties(s)
	names := make([]string, 0, len(members)+len(props))
	for n := range members {
		names = append(names, n)
	}
	for n := range props {
		if _, ok := members[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		f, inGo := members[n]
		p, inSchema := props[n]
		switch {
		case !inSchema:
			w.mismatches = append(w.mismatches, path+"."+n+": in "+typ.Name()+", not in the schema")
		case !inGo:
			w.mismatches = append(w.mismatches, path+"."+n+": in the schema, not in "+typ.Name())
		default:
			w.compare(f, p, path+"."+n)
		}
	}
}

// jsonMembers are the object members encoding/json writes for a struct type: JSON name → type.
// Embedded structs without a JSON name give their members, as encoding/json promotes them.
func jsonMembers(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range typ.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			for n, t := range jsonMembers(ft) {
				if _, ok := out[n]; !ok { // the outer field wins, as in encoding/json
					out[n] = t
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// embeddedStructs are the struct types a struct embeds without a JSON name, at any depth.
func embeddedStructs(typ reflect.Type) []reflect.Type {
	var out []reflect.Type
	for f := range typ.Fields() {
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			out = append(out, ft)
			out = append(out, embeddedStructs(ft)...)
		}
	}
	return out
}

// branches are s and every schema its allOf, oneOf and anyOf hold, at any depth ($refs resolved
// by the loader).
func branches(s *openapi3.Schema) []*openapi3.Schema {
	out := []*openapi3.Schema{s}
	for _, group := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
		for _, r := range group {
			if r != nil && r.Value != nil {
				out = append(out, branches(r.Value)...)
			}
		}
	}
	return out
}

// schemaProperties are the properties of s and of its branches; where several name one, the first
// with a type or a $ref decides (a branch's `status: {const: …}` narrows, it does not redefine).
func schemaProperties(s *openapi3.Schema) map[string]*openapi3.Schema {
	out := map[string]*openapi3.Schema{}
	for _, b := range branches(s) {
		for n, r := range b.Properties {
			if r == nil || r.Value == nil {
				continue
			}
			if _, ok := out[n]; !ok || (out[n].Type == nil && r.Value.Type != nil) {
				out[n] = r.Value
			}
		}
	}
	return out
}

// schemaItems is the schema of an array's elements: the first items among s and its branches.
func schemaItems(s *openapi3.Schema) *openapi3.Schema {
	for _, b := range branches(s) {
		if b.Items != nil && b.Items.Value != nil {
			return b.Items.Value
		}
	}
	return nil
}

// schemaValues is the schema of a map's values: the first additionalProperties schema among s and
// its branches.
func schemaValues(s *openapi3.Schema) *openapi3.Schema {
	for _, b := range branches(s) {
		if ap := b.AdditionalProperties.Schema; ap != nil && ap.Value != nil {
			return ap.Value
		}
	}
	return nil
}

// jsonTaggedStructs are the names of the struct types declared in the package's non-test source
// files with at least one json tag.
func jsonTaggedStructs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			if st, ok := spec.Type.(*ast.StructType); ok && hasJSONTag(st) {
				out = append(out, spec.Name.Name)
			}
			return true
		})
	}
	sort.Strings(out)
	return out
}

func hasJSONTag(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if f.Tag == nil {
			continue
		}
		tag, err := strconv.Unquote(f.Tag.Value)
		if err == nil {
			if _, ok := reflect.StructTag(tag).Lookup("json"); ok {
				return true
			}
		}
	}
	return false
}
