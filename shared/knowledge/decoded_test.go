package knowledge_test

import (
	"encoding/json"
	"fmt"
)

// decoded decodes a well-shaped request body into a feature's input (the errors of a body's
// shape, unknown keys and values of the wrong JSON type, are the edge's decoder's: api
// TestDecodeGolden).
func decoded[T any](m map[string]any) T {
	var in T
	b, err := json.Marshal(m)
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	if err != nil {
		panic(fmt.Sprintf("body %v: %v", m, err))
	}
	return in
}

// ptrs makes the ids of an input built in Go.
func ptrs(ids ...string) []*string {
	out := make([]*string, len(ids))
	for i := range ids {
		out[i] = &ids[i]
	}
	return out
}
