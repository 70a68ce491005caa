package api

import (
	"encoding/json"
	"net/http"

	"github.com/agentorch/agentorch/shared/domain"
)

// decodeInput reads the body as decodeObject does (JSON or YAML, one object, its text checked)
// into a feature's typed input, which reads itself from the JSON and keeps the field errors of
// its shape for the feature to report with those of its values.
func decodeInput(w http.ResponseWriter, r *http.Request, limit int64, dst json.Unmarshaler) error {
	m, err := decodeObject(w, r, limit)
	if err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return domain.Errorf(domain.KindInvalid, "The request body could not be read")
	}
	return dst.UnmarshalJSON(b)
}
