package sessions_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/sessions"
)

func TestParseJob(t *testing.T) {
	const (
		sid = "6f1c1d9e-3b7a-4c55-9a51-0d6f3f6f2a10"
		eid = "0b8f7c44-2d1e-4f0b-8a8e-5c3d2b1a0f99"
	)
	tests := []struct {
		name       string
		body       string
		wantS      string
		wantE      string
		wantFields []domain.FieldError // nil: valid
	}{
		{"valid", `{"session_id":"` + sid + `","execution_id":"` + eid + `"}`, sid, eid, nil},
		{"unknown fields ignored", `{"session_id":"` + sid + `","execution_id":"` + eid + `","trace":"x"}`, sid, eid, nil},
		{"missing both", `{}`, "", "", []domain.FieldError{
			{Field: "session_id", Message: "is required"}, {Field: "execution_id", Message: "is required"}}},
		{"not uuids", `{"session_id":"abc","execution_id":"` + eid + `"}`, "", "", []domain.FieldError{
			{Field: "session_id", Message: "must be a UUID"}}},
		{"uuid not canonical", `{"session_id":"{` + sid + `}","execution_id":"urn:uuid:` + eid + `"}`, "", "", []domain.FieldError{
			{Field: "session_id", Message: "must be a UUID"}, {Field: "execution_id", Message: "must be a UUID"}}},
		{"not json", `session_id=` + sid, "", "", []domain.FieldError{}},
		{"trailing data", `{"session_id":"` + sid + `","execution_id":"` + eid + `"} {}`, "", "", []domain.FieldError{}},
		{"ids not strings", `{"session_id":1,"execution_id":2}`, "", "", []domain.FieldError{}},
		{"empty", ``, "", "", []domain.FieldError{}},
		{"too large", `{"session_id":"` + sid + `","execution_id":"` + eid + `","pad":"` + strings.Repeat("x", 1024) + `"}`, "", "", []domain.FieldError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotS, gotE, err := sessions.ParseJob(tt.body)
			if tt.wantFields == nil {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if gotS != tt.wantS || gotE != tt.wantE {
					t.Errorf("got %q, %q; want %q, %q", gotS, gotE, tt.wantS, tt.wantE)
				}
				return
			}
			var de *domain.Error
			if !asDomain(err, &de) || de.Kind != domain.KindInvalid {
				t.Fatalf("err = %v, want an invalid_request_error", err)
			}
			if gotS != "" || gotE != "" {
				t.Errorf("ids %q, %q returned with an error", gotS, gotE)
			}
			if len(tt.wantFields) > 0 {
				if diff := cmp.Diff(tt.wantFields, de.Fields); diff != "" {
					t.Errorf("fields (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func asDomain(err error, target **domain.Error) bool { return errors.As(err, target) }
