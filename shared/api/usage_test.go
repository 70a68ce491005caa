package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/usage"
	"github.com/agentorch/agentorch/shared/usage/usagetest"
)

// TestUsageReport: GET /api/v1/usage/ answers the counters of the caller's company by day, key
// or agent, each answer held to the document; bad parameters are a 400 naming them, a key
// without usage:read a 403.
func TestUsageReport(t *testing.T) {
	ctx := context.Background()
	st := usagetest.NewStore()
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	for _, e := range []domain.UsageEntry{
		{Company: "acme", Day: day, KeyID: "k1", AgentID: "a1", UsageCount: domain.UsageCount{Requests: 2, Executions: 1, InputTokens: 30, OutputTokens: 7, CostUSD: 0.25}},
		{Company: "acme", Day: day, KeyID: "", AgentID: "a1", UsageCount: domain.UsageCount{Requests: 1, Executions: 1, InputTokens: 5, OutputTokens: 1, Unpriced: 1}},
		{Company: "globex", Day: day, KeyID: "k9", UsageCount: domain.UsageCount{Requests: 9}},
	} {
		if err := st.CountUsage(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	svc := usage.New(st)
	do := func(p domain.Principal, query string) (int, map[string]any) {
		t.Helper()
		h := api.NewAuth(nil, api.Options{Auth: openapiAuth{p: p}}).ServeUsage(svc)
		req := httptest.NewRequest(http.MethodGet, "/api/v1/usage/"+query, nil)
		req.Header.Set("x-api-key", "ak_x")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		body, _ := io.ReadAll(w.Result().Body)
		checkOpenAPI(t, req, nil, w.Code, w.Header(), body)
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return w.Code, v
	}
	admin := domain.Principal{Company: "acme", KeyID: "k1", Scopes: []string{domain.ScopeAdmin}}
	code, v := do(admin, "?from=2026-11-01&to=2026-11-02&group_by=api_key")
	want := map[string]any{"object": "usage.report", "from": "2026-11-01", "to": "2026-11-02", "group_by": "api_key",
		"data": []any{
			map[string]any{"api_key_id": "", "requests": 1.0, "executions": 1.0, "input_tokens": 5.0, "output_tokens": 1.0, "embedding_tokens": 0.0, "cost_usd": 0.0, "unpriced_requests": 1.0},
			map[string]any{"api_key_id": "k1", "requests": 2.0, "executions": 1.0, "input_tokens": 30.0, "output_tokens": 7.0, "embedding_tokens": 0.0, "cost_usd": 0.25, "unpriced_requests": 0.0},
		},
		"total": map[string]any{"requests": 3.0, "executions": 2.0, "input_tokens": 35.0, "output_tokens": 8.0, "embedding_tokens": 0.0, "cost_usd": 0.25, "unpriced_requests": 1.0}}
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, v)
	}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if code, v := do(admin, "?from=2026-11-02&to=2026-11-02"); code != http.StatusOK || len(v["data"].([]any)) != 1 || v["data"].([]any)[0].(map[string]any)["day"] != "2026-11-02" {
		t.Errorf("by day: %d %v", code, v)
	}
	for query, field := range map[string]string{"?from=2026-13-01": "from", "?to=yesterday": "to", "?group_by=model": "group_by",
		"?from=2026-11-03&to=2026-11-02": "from"} {
		code, v := do(admin, query)
		e, _ := v["error"].(map[string]any)
		errs, _ := e["errors"].([]any)
		if code != http.StatusBadRequest || e["type"] != "invalid_request_error" || len(errs) != 1 || errs[0].(map[string]any)["field"] != field {
			t.Errorf("%s: %d %v, want a 400 naming %s", query, code, v, field)
		}
	}
	if code, v := do(domain.Principal{Company: "acme", Scopes: []string{domain.ScopeSessionRead}}, ""); code != http.StatusForbidden {
		t.Errorf("without usage:read: %d %v, want 403", code, v)
	}
}
