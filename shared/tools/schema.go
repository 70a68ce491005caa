package tools

import (
	"fmt"
	"slices"
	"sort"
	"unicode/utf8"
)

// objectSchema builds the JSON schema of a tool input: an object with the given properties,
// the required ones listed and nothing else allowed.
func objectSchema(props map[string]any, required ...string) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}

// checkInput validates a tool input against the subset of JSON schema the tools use: type
// object and string, properties, required, additionalProperties (false or a schema), enum and
// maxLength. Checking against the very schema the model sees keeps the two from drifting.
func checkInput(schema map[string]any, input map[string]any) error {
	if input == nil {
		input = map[string]any{}
	}
	if msg := check(schema, input, "input"); msg != "" {
		return fmt.Errorf("%w: %s", ErrInvalidInput, msg)
	}
	return nil
}

// check returns a message naming the first violation at path, or "" when v conforms.
func check(schema map[string]any, v any, path string) string {
	switch schema["type"] {
	case "string":
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("%s must be a string, not %s", path, jsonType(v))
		}
		if enum, ok := schema["enum"].([]string); ok && !slices.Contains(enum, s) {
			return fmt.Sprintf("%s must be one of %q, not %q", path, enum, s)
		}
		if n, ok := schema["maxLength"].(int); ok && utf8.RuneCountInString(s) > n {
			return fmt.Sprintf("%s is longer than %d characters", path, n)
		}
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s must be an object, not %s", path, jsonType(v))
		}
		return checkObject(schema, m, path)
	}
	return ""
}

func checkObject(schema, m map[string]any, path string) string {
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]string)
	for _, name := range required {
		if _, ok := m[name]; !ok {
			return fmt.Sprintf("%s.%s is required", path, name)
		}
	}
	if n, ok := schema["maxProperties"].(int); ok && len(m) > n {
		return fmt.Sprintf("%s has more than %d properties", path, n)
	}
	// Sorted so that the first violation reported is the same on every call.
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub, ok := props[k].(map[string]any)
		if !ok {
			switch extra := schema["additionalProperties"].(type) {
			case map[string]any:
				sub = extra
			case bool:
				if !extra {
					return fmt.Sprintf("%s has unknown property %q (allowed: %s)", path, k, propNames(props))
				}
				continue
			default:
				continue
			}
		}
		if msg := check(sub, m[k], path+"."+k); msg != "" {
			return msg
		}
	}
	return ""
}

func propNames(props map[string]any) string {
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	return fmt.Sprintf("%q", names)
}

// jsonType names the JSON type of a decoded value for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64, float32, int32:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// stringField returns input[name] as a string, or "" when absent; checkInput has run first.
func stringField(input map[string]any, name string) string {
	s, _ := input[name].(string)
	return s
}
