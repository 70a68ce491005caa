package domain

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ConfigDoc is a configuration document as a client sent it: the JSON object decoded with numbers
// kept as json.Number, so that it is stored, hashed and echoed back exactly as sent. The API
// decodes a body into one and the features take it whole; they read it only through the methods
// below (Parse for the typed configuration). The zero ConfigDoc is no document at all.
type ConfigDoc struct {
	obj     map[string]any
	ordered []byte // obj in JSON, members in the client's order (ConfigDocJSON); nil when unknown
}

// ConfigDocOf wraps a decoded JSON object (numbers as json.Number) as a document; the document
// keeps obj, so the caller hands it over and does not change it afterwards.
func ConfigDocOf(obj map[string]any) ConfigDoc {
	return ConfigDoc{obj: obj}
}

// IsZero reports whether d is no document (as opposed to an empty object).
func (d ConfigDoc) IsZero() bool {
	return d.obj == nil
}

// Object is the document's JSON object itself, for a record that stores or shows it as sent
// (Agent.Explicit, AgentVersion.SystemConfig, Session.Config); it must not be changed.
func (d ConfigDoc) Object() map[string]any {
	return d.obj
}

// Name is the document's top-level name, "" when it has none or it is not a string.
func (d ConfigDoc) Name() string {
	name, _ := d.obj["name"].(string)
	return name
}

// Hash is ConfigHash of the document.
func (d ConfigDoc) Hash() string {
	return ConfigHash(d.obj)
}

// Merge returns d with patch applied as an RFC 7386 JSON merge patch (a null removes a field);
// d itself is left alone.
func (d ConfigDoc) Merge(patch ConfigDoc) ConfigDoc {
	return ConfigDoc{obj: MergePatch(d.obj, patch.obj)}
}

// Parse is ParseConfig of the document: the typed configuration, or field errors with dotted
// paths under prefix ("" or "system_config").
func (d ConfigDoc) Parse(tools ToolCatalog, prefix string) (*AgentConfig, []FieldError) {
	return ParseConfig(d.obj, tools, prefix)
}

// MarshalJSON writes the document as sent (object keys sorted, as encoding/json writes maps).
func (d ConfigDoc) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.obj)
}

// UnmarshalJSON reads a JSON object, numbers kept as json.Number and members' order known
// (OrderedJSON); null leaves no document.
func (d *ConfigDoc) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if v == nil {
		*d = ConfigDoc{}
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return errors.New("a configuration must be a JSON object, not " + JSONType(v))
	}
	*d = ConfigDocJSON(obj, b)
	return nil
}
