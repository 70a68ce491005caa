package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentorch/agentorch/shared/domain"
)

// ErrClientSide is what a function tool's Call answers: the engine hands such calls to the
// client and never makes them.
var ErrClientSide = errors.New("a function tool is run by the client")

// MaxSchemaBytes bounds a tool's input schema as JSON (a function's parameters, an MCP tool's
// inputSchema).
const MaxSchemaBytes = 16 << 10

// noLoader refuses every $ref outside the schema itself: a schema is the client's (or an MCP
// server's) data and must not make the service read files or fetch addresses.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref %q: only references within the schema are allowed", url)
}

// schemaURL names a schema being compiled: not a file (a name without a scheme would resolve
// against the working directory, which messages would then show), and nothing is loaded from it.
const schemaURL = "https://schemas.agentorch.invalid/tool-input.json"

// Schema is a compiled JSON Schema of a tool's arguments.
type Schema struct {
	s    *jsonschema.Schema
	same map[*jsonschema.Schema][]*jsonschema.Schema // the subschemas each applies in place
}

// CompileSchema compiles a tool's input schema (draft 2020-12 unless it names another).
func CompileSchema(schema map[string]any) (*Schema, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if len(b) > MaxSchemaBytes {
		return nil, fmt.Errorf("larger than %d bytes of JSON", MaxSchemaBytes)
	}
	// The library wants numbers as json.Number, as its own decoder gives them.
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, errors.New(firstLine(err))
	}
	s, err := c.Compile(schemaURL)
	var sve *jsonschema.SchemaValidationError
	switch {
	case errors.As(err, &sve):
		return nil, errors.New(validationMessage(sve.Err))
	case err != nil:
		return nil, errors.New(firstLine(err))
	}
	same, err := checkBudget(s)
	if err != nil {
		return nil, err
	}
	return &Schema{s: s, same: same}, nil
}

// Check validates arguments; the error says what is wrong in words a model can act on. Arguments
// whose check would take more than MaxCheckSteps steps are refused before the library runs.
func (s *Schema) Check(args map[string]any) error {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("%w: arguments are not JSON", ErrInvalidInput)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		return fmt.Errorf("%w: arguments are not JSON", ErrInvalidInput)
	}
	if c := (steps{limit: MaxCheckSteps, same: s.same}); !c.walk(s.s, v) {
		return fmt.Errorf("%w: the arguments are too large or too deeply nested to check against the tool's schema (more than %d steps); send simpler arguments",
			ErrInvalidInput, MaxCheckSteps)
	}
	if err := s.s.Validate(v); err != nil {
		return fmt.Errorf("%w: the arguments do not match the tool's schema: %s", ErrInvalidInput, validationMessage(err))
	}
	return nil
}

// english prints the library's messages (its ErrorKind needs a printer).
var english = message.NewPrinter(language.English)

// validationMessage flattens the library's error tree into one short line. Values the arguments
// brought (a string that fails a pattern, a property name) are quoted as excerpts of
// maxExcerpt bytes, and each violation's text is clipped: a 60 KB argument is not sent back.
func validationMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return firstLine(err)
	}
	var parts []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			parts = append(parts, domain.Clip(fmt.Sprintf("at %s: %s", pointer(e.InstanceLocation), describe(e.ErrorKind)), 4*maxExcerpt))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(parts) > 5 {
		parts = append(parts[:5], "…")
	}
	return strings.Join(parts, "; ")
}

// maxExcerpt bounds a value of the arguments quoted in an error.
const maxExcerpt = 100

// pointer is a JSON pointer into the arguments, each name clipped.
func pointer(path []string) string {
	clipped := make([]string, len(path))
	for i, p := range path {
		clipped[i] = domain.Clip(p, maxExcerpt)
	}
	return domain.Clip("/"+strings.Join(clipped, "/"), 2*maxExcerpt)
}

// describe words a violation, clipping what it quotes of the arguments.
func describe(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Pattern:
		c := *k
		c.Got, c.Want = domain.Clip(k.Got, maxExcerpt), domain.Clip(k.Want, maxExcerpt)
		return c.LocalizedString(english)
	case *kind.Format:
		c := *k
		if s, ok := k.Got.(string); ok {
			c.Got = domain.Clip(s, maxExcerpt)
		}
		if k.Err != nil {
			c.Err = errors.New(domain.Clip(firstLine(k.Err), maxExcerpt))
		}
		return c.LocalizedString(english)
	case *kind.AdditionalProperties:
		names := make([]string, 0, 5)
		for _, n := range slices.Sorted(slices.Values(k.Properties))[:min(len(k.Properties), 5)] {
			names = append(names, domain.Clip(n, maxExcerpt))
		}
		msg := (&kind.AdditionalProperties{Properties: names}).LocalizedString(english)
		if more := len(k.Properties) - len(names); more > 0 {
			msg += fmt.Sprintf(" (and %d more)", more)
		}
		return msg
	}
	return k.LocalizedString(english)
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return domain.Clip(s, 300)
}

// CheckSchema implements domain.ToolCatalog: a function tool's parameters must compile.
func (r *Registry) CheckSchema(schema map[string]any) error {
	_, err := CompileSchema(schema)
	return err
}

// lazySchema is a tool's input schema, compiled on its first check: a run binds every tool its
// node may call (an MCP server's, all of them), and most are never called. A schema that does not
// compile checks nothing: the MCP server applies its own (ParseConfig refused such a function).
// One refused as too complex is an error for every call: the model learns why its call failed
// rather than the run spending its time on a check.
type lazySchema struct {
	schema map[string]any
	once   sync.Once
	s      *Schema
	err    error
}

// Check validates args against the schema once it is compiled.
func (l *lazySchema) Check(args map[string]any) error {
	l.once.Do(func() { l.s, l.err = CompileSchema(l.schema) })
	if errors.Is(l.err, errTooComplex) {
		return fmt.Errorf("%w: the tool's input schema is %w", ErrInvalidInput, l.err)
	}
	if l.s == nil {
		return nil
	}
	return l.s.Check(args)
}

// functionTool is a {type: "function"} entry of a node: the model sees it, the client runs it.
type functionTool struct {
	spec   domain.ToolSpec
	schema *lazySchema
}

// NewFunction makes the tool of a function entry (ParseConfig checked its schema).
func NewFunction(f domain.FunctionTool) domain.DescribedTool {
	return &functionTool{spec: domain.ToolSpec{Name: f.Name, Description: f.Description, Schema: f.Parameters},
		schema: &lazySchema{schema: f.Parameters}}
}

func (f *functionTool) Spec() domain.ToolSpec { return f.spec }

func (f *functionTool) Call(context.Context, map[string]any) (string, error) {
	return "", ErrClientSide
}

func (f *functionTool) Meta() domain.ToolMeta {
	return domain.ToolMeta{Kind: domain.ToolKindFunction, Check: f.schema.Check}
}
