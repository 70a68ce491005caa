package opensearchlocal_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/agentorch/agentorch/infra/opensearchlocal"
)

// stand is one stand-in behind a real HTTP server, with the official client pointed at it.
type stand struct {
	url    string
	client *opensearchapi.Client
}

func newStand(t *testing.T) *stand {
	t.Helper()
	srv := opensearchlocal.New(opensearchlocal.Options{RefreshTick: 10 * time.Millisecond})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	c, err := opensearchapi.NewClient(opensearchapi.Config{Client: opensearch.Config{Addresses: []string{ts.URL}, DisableRetry: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &stand{url: ts.URL, client: c}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// osErr asserts err is OpenSearch's structured error with the given status and type.
func osErr(t *testing.T, err error, status int, typ string) *opensearch.StructError {
	t.Helper()
	var se *opensearch.StructError
	if !errors.As(err, &se) {
		t.Fatalf("error = %v (%T), want an OpenSearch error %d %s", err, err, status, typ)
	}
	if se.Status != status || se.Err.Type != typ {
		t.Fatalf("error = %d %s (%s), want %d %s", se.Status, se.Err.Type, se.Err.Reason, status, typ)
	}
	return se
}

// raw sends a request with plain net/http and decodes the JSON answer (nil for an empty body).
func (s *stand) raw(t *testing.T, method, path, contentType, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, _ := io.ReadAll(res.Body)
	if len(strings.TrimSpace(string(b))) == 0 {
		return res.StatusCode, nil
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: body is not a JSON object: %s", method, path, b)
	}
	return res.StatusCode, out
}

func (s *stand) json(t *testing.T, method, path, body string) (int, map[string]any) {
	return s.raw(t, method, path, "application/json", body)
}

// errorOf returns the "error" object of an OpenSearch error body.
func errorOf(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %v", body)
	}
	return e
}

func (s *stand) createIndex(t *testing.T, name, body string) {
	t.Helper()
	if _, err := s.client.Indices.Create(ctx(t), opensearchapi.IndicesCreateReq{Index: name, Body: strings.NewReader(body)}); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

func (s *stand) bulk(t *testing.T, body string, params opensearchapi.BulkParams) *opensearchapi.BulkResp {
	t.Helper()
	res, err := s.client.Bulk(ctx(t), opensearchapi.BulkReq{Body: strings.NewReader(body), Params: params})
	if err != nil {
		t.Fatalf("bulk: %v", err)
	}
	if res.Errors {
		t.Fatalf("bulk had item errors: %+v", res.Items)
	}
	return res
}

func (s *stand) search(t *testing.T, index, body string) *opensearchapi.SearchResp {
	t.Helper()
	res, err := s.client.Search(ctx(t), &opensearchapi.SearchReq{Indices: []string{index}, Body: strings.NewReader(body)})
	if err != nil {
		t.Fatalf("search %s: %v", body, err)
	}
	return res
}

func (s *stand) refresh(t *testing.T, index string) {
	t.Helper()
	if _, err := s.client.Indices.Refresh(ctx(t), &opensearchapi.IndicesRefreshReq{Index: []string{index}}); err != nil {
		t.Fatal(err)
	}
}

func hitIDs(res *opensearchapi.SearchResp) []string {
	var ids []string
	for _, h := range res.Hits.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}
