package vectors

import "testing"

func TestEndpointURL(t *testing.T) {
	for in, want := range map[string]string{
		"search-kb-abc123.eu-central-1.es.amazonaws.com": "https://search-kb-abc123.eu-central-1.es.amazonaws.com",
		" http://127.0.0.1:9200/ ":                       "http://127.0.0.1:9200",
		"https://vpc-x.es.amazonaws.com":                 "https://vpc-x.es.amazonaws.com",
	} {
		if got, err := endpointURL(in); err != nil || got != want {
			t.Errorf("endpointURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
