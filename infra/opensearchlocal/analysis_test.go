package opensearchlocal

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Expected tokens follow Lucene's StandardTokenizer (UAX #29 word boundaries) and the
// lowercase filter, as OpenSearch's documentation shows for the standard analyzer.
func TestStandardAnalyzer(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		// The example in OpenSearch's standard analyzer documentation.
		{"The 2 QUICK Brown-Foxes jumped over the lazy dog's bone.", []string{"the", "2", "quick", "brown", "foxes", "jumped", "over", "the", "lazy", "dog's", "bone"}},
		{"e-mail: foo@bar.com", []string{"e", "mail", "foo", "bar.com"}},
		{"U.S.A. costs 3.14 or 1,000,000", []string{"u.s.a", "costs", "3.14", "or", "1,000,000"}},
		{"snake_case and abc123def", []string{"snake_case", "and", "abc123def"}},
		{"O'Neil's café — naïve", []string{"o'neil's", "café", "naïve"}},
		{"我爱北京", []string{"我", "爱", "北", "京"}},
		{"カタカナ ひらがな", []string{"カタカナ", "ひ", "ら", "が", "な"}},
		{"  ...  __ !!", nil},
		{"trailing. end,", []string{"trailing", "end"}},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, analyze(c.in)); diff != "" {
			t.Errorf("analyze(%q) (-want +got):\n%s", c.in, diff)
		}
	}
}

// Lucene's SmallFloat norm encoding: exact below 24, then 3 significant bits (monotone,
// never above the input).
func TestLengthNormEncoding(t *testing.T) {
	for i := 0; i < 24; i++ {
		if got := byte4ToInt(intToByte4(i)); got != i {
			t.Errorf("decode(encode(%d)) = %d", i, got)
		}
	}
	prevByte := intToByte4(0)
	for i := 1; i < 1<<20; i += 1 + i/64 {
		b := intToByte4(i)
		d := byte4ToInt(b)
		if b < prevByte || d > i || float64(d) < float64(i)*0.87 {
			t.Fatalf("encode(%d) = %d decoding to %d (previous byte %d)", i, b, d, prevByte)
		}
		prevByte = b
	}
	if intToByte4(97) != intToByte4(103) || intToByte4(103) == intToByte4(104) {
		t.Error("97..103 should share a norm byte, 104 should not")
	}
}

func TestJSONPositionsAndDuplicates(t *testing.T) {
	src := []byte("{\n  \"a\": 1,\n  \"b\": [true, null]\n}")
	v, err := parseJSON(src)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.get("b").pos(); got != "[3:8]" {
		t.Errorf("position of b's value = %s, want [3:8]", got)
	}
	if _, err := parseJSON([]byte(`{"a":1,"a":2}`)); err == nil || err.Error() != "Duplicate field 'a'" {
		t.Errorf("duplicate keys: %v", err)
	}
	for _, bad := range []string{`{"a":}`, `[1,]`, `{"a":1} x`, `01`, `"\x"`, `tru`} {
		if _, err := parseJSON([]byte(bad)); err == nil {
			t.Errorf("parseJSON(%s) accepted malformed JSON", bad)
		}
	}
	if got := string(mustParse(t, `{"b":1,"a":{"y":[1,2.5e3,"s"]}}`).raw()); got != `{"b":1,"a":{"y":[1,2.5e3,"s"]}}` {
		t.Errorf("re-encoding changed order or numbers: %s", got)
	}
}

func mustParse(t *testing.T, s string) *jv {
	t.Helper()
	v, err := parseJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSourceFiltering(t *testing.T) {
	src := mustParse(t, `{"kb_id":"k","embedding":[1,2],"meta":{"page":3,"title":"t","deep":{"x":1}},"chunks":[{"a":1,"b":2}]}`)
	cases := []struct {
		inc, exc []string
		want     string
	}{
		{nil, []string{"embedding"}, `{"kb_id":"k","meta":{"page":3,"title":"t","deep":{"x":1}},"chunks":[{"a":1,"b":2}]}`},
		{[]string{"meta.page", "kb_id"}, nil, `{"kb_id":"k","meta":{"page":3}}`},
		{[]string{"meta.*"}, []string{"meta.deep"}, `{"meta":{"page":3,"title":"t"}}`},
		{[]string{"chunks.a"}, nil, `{"chunks":[{"a":1}]}`},
		{[]string{"*"}, []string{"*.x", "chunks"}, `{"kb_id":"k","embedding":[1,2],"meta":{"page":3,"title":"t","deep":{}}}`},
	}
	for _, c := range cases {
		if got := string(filterSource(src, c.inc, c.exc).raw()); got != c.want {
			t.Errorf("filter(%v, %v) = %s, want %s", c.inc, c.exc, got, c.want)
		}
	}
}
