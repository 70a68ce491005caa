package vectors

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/opensearch-project/opensearch-go/v4"

	"github.com/agentorch/agentorch/shared/domain"
)

// ErrDimensionMismatch marks a vector whose length is not the index's dimension: a chunk
// embedded by another model than its index's, or a query vector of the wrong model. It is an
// internal fault (configuration), never the client's.
var ErrDimensionMismatch = errors.New("vector dimension mismatch")

// osError is OpenSearch's structured error of a failed request, if err is one.
func osError(err error) (*opensearch.StructError, bool) {
	var se *opensearch.StructError
	if errors.As(err, &se) {
		return se, true
	}
	return nil, false
}

// isType reports whether err is OpenSearch's error of the given type.
func isType(err error, typ string) bool {
	se, ok := osError(err)
	return ok && se.Err.Type == typ
}

// translate maps a failed request onto the domain's kinds; the OpenSearch error stays the cause
// for the log. Errors that OpenSearch blames on the request are internal here: the adapter
// builds every request, so a 400 is its own bug or a misconfiguration, never the API client's.
func translate(err error) error {
	if err == nil {
		return nil
	}
	se, ok := osError(err)
	if !ok {
		// Transport failures (connection refused, timeouts after the client's retries).
		return domain.Wrap(domain.KindOverloaded, err, domain.ErrOverloaded.Message)
	}
	if mismatch(se.Err.Reason) || causeMismatch(se.Err.CausedBy) || rootMismatch(se.Err.RootCause) {
		return fmt.Errorf("%w: %w", ErrDimensionMismatch, err)
	}
	switch {
	case se.Err.Type == "index_not_found_exception":
		return domain.Wrap(domain.KindNotFound, err, domain.ErrNotFound.Message)
	case se.Status == http.StatusConflict:
		return domain.Wrap(domain.KindConflict, err, domain.ErrConflict.Message)
	case se.Status == http.StatusTooManyRequests || se.Status == http.StatusServiceUnavailable ||
		se.Status == http.StatusBadGateway || se.Status == http.StatusGatewayTimeout:
		return domain.Wrap(domain.KindOverloaded, err, domain.ErrOverloaded.Message)
	}
	return err
}

// mismatch recognises the k-NN plugin's reason "Vector dimension mismatch. Expected: 512,
// Given: 3" (indexing) and the query's "Query vector has invalid dimension: 3. Dimension
// should be: 512" (searching).
func mismatch(reason string) bool {
	r := strings.ToLower(reason)
	return strings.Contains(r, "dimension mismatch") || strings.Contains(r, "invalid dimension")
}

func causeMismatch(c *opensearch.CausedBy) bool {
	for ; c != nil; c = c.CausedBy {
		if mismatch(c.Reason) {
			return true
		}
	}
	return false
}

func rootMismatch(rc []opensearch.RootCause) bool {
	for _, c := range rc {
		if mismatch(c.Reason) {
			return true
		}
	}
	return false
}
