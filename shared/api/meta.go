package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"gopkg.in/yaml.v3"
)

//go:embed openapi/openapi.yaml
var openapiYAML []byte

// OpenAPIYAML is the OpenAPI 3.1 document of the API, as written.
func OpenAPIYAML() []byte { return openapiYAML }

// NewMeta is the handler of the meta group: health and the OpenAPI document, both public.
func NewMeta(opts Options) *Group {
	g := newGroup(opts)
	var once sync.Once
	var doc []byte
	var docErr error
	g.handle(http.MethodGet, "/api/v1/health/", true, func(w http.ResponseWriter, r *http.Request) error {
		writeJSON(w, http.StatusOK, healthJSON{Status: "ok"})
		return nil
	})
	g.handle(http.MethodGet, "/api/v1/openapi.json", true, func(w http.ResponseWriter, r *http.Request) error {
		once.Do(func() { doc, docErr = OpenAPIJSON() })
		if docErr != nil {
			return docErr
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
		return nil
	})
	return g
}

// OpenAPIJSON converts the embedded YAML document to JSON.
func OpenAPIJSON() ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(openapiYAML, &v); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	return json.Marshal(v)
}
