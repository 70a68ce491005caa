package opensearchlocal

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

const storedMapping = `{"properties":{
  "embedding":{"type":"knn_vector","dimension":3},
  "inner":{"properties":{"v":{"type":"knn_vector","dimension":3}}},
  "text":{"type":"text"}}}`

// TestStoredSourceIsByteExact stores sources through the document parser and reads them back:
// every spelling comes back as sent, and only what re-renders exactly is cut out.
func TestStoredSourceIsByteExact(t *testing.T) {
	mv, err := parseJSON([]byte(storedMapping))
	if err != nil {
		t.Fatal(err)
	}
	m, e := parseMapping(mv, true)
	if e != nil {
		t.Fatal(e)
	}
	r := rand.New(rand.NewPCG(7, 8))
	random := make([]float32, 3)
	for i := range random {
		random[i] = float32(r.NormFloat64() / 20)
	}
	marshalled, _ := json.Marshal(map[string]any{"text": "a b", "embedding": random})
	tiny, _ := json.Marshal(map[string]any{"embedding": []float32{1e-7, -3.4e38, 1e21}})
	cases := []struct {
		name string
		src  string
		cuts int
	}{
		{"encoding/json", string(marshalled), 1},
		{"exponents", string(tiny), 1},
		{"integers and short decimals", `{"embedding":[1,2.5,-3]}`, 1},
		{"spaces inside", `{"embedding":[1, 2.5, -3]}`, 0},
		{"trailing zero", `{"embedding":[1.0,2.5,-3]}`, 0},
		{"more digits than float32", `{"embedding":[0.1000000000001,2.5,-3]}`, 0},
		{"uppercase exponent", `{"embedding":[1E-7,2.5,-3]}`, 0},
		{"two vectors, one nested", `{ "embedding" : [0.5,0.25,-1], "inner": {"v":[3,2,1]}, "text":"x" }`, 2},
		{"one of two spelt otherwise", `{"embedding":[0.5, 0.25,-1],"inner":{"v":[3,2,1]}}`, 1},
		{"a single number", `{"inner":{"v":[1,2,3]},"embedding":null}`, 1},
		{"pretty", "{\n  \"embedding\": [\n    1,\n    2,\n    3\n  ]\n}", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pd, e := parseSource(m, "1", []byte(tc.src))
			if e != nil {
				t.Fatal(e.reason)
			}
			st := compactSource([]byte(tc.src), pd.spans)
			if got := string(st.bytes()); got != tc.src {
				t.Errorf("bytes = %s, want %s", got, tc.src)
			}
			if len(st.cuts) != tc.cuts {
				t.Errorf("%d vectors cut out, want %d", len(st.cuts), tc.cuts)
			}
			if tc.cuts > 0 && len(st.raw) >= len(tc.src) {
				t.Errorf("stored %d bytes of a %d-byte source", len(st.raw), len(tc.src))
			}
		})
	}
}

// TestFloat32JSONMatchesEncodingJSON compares the vector writer with encoding/json on values
// of every magnitude.
func TestFloat32JSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	vals := []float32{0, float32(math.Copysign(0, -1)), 1e-6, 9.999999e-7, 1e21, 9.999999e20, math.MaxFloat32, math.SmallestNonzeroFloat32}
	for i := 0; i < 20000; i++ {
		vals = append(vals, math.Float32frombits(r.Uint32()))
	}
	for _, x := range vals {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			continue
		}
		want, _ := json.Marshal(x)
		if got := appendFloat32JSON(nil, x); string(got) != string(want) {
			t.Fatalf("%g: got %s, want %s", x, got, want)
		}
	}
}
