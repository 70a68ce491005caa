package api

import (
	"encoding/json"
	"net/http"
)

// decodeInput reads the body as decodeObject does (JSON or YAML, one object, its text checked)
// into a feature's typed input, which reads itself from the body's JSON and keeps the field
// errors of its shape for the feature to report with those of its values.
func decodeInput(w http.ResponseWriter, r *http.Request, limit int64, dst json.Unmarshaler) error {
	_, b, err := readObject(w, r, limit)
	if err != nil {
		return err
	}
	return dst.UnmarshalJSON(b)
}
