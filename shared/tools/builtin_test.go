package tools

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCurrentTime(t *testing.T) {
	now := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)
	c := clock{now: func() time.Time { return now }}
	for _, tc := range []struct {
		input map[string]any
		want  string
	}{
		{nil, "2026-11-22T18:00:00Z (Sunday)"},
		{map[string]any{}, "2026-11-22T18:00:00Z (Sunday)"},
		{map[string]any{"timezone": ""}, "2026-11-22T18:00:00Z (Sunday)"},
		{map[string]any{"timezone": "UTC"}, "2026-11-22T18:00:00Z (Sunday)"},
		{map[string]any{"timezone": "utc"}, "2026-11-22T18:00:00Z (Sunday)"},
		{map[string]any{"timezone": "Etc/UTC"}, "2026-11-22T18:00:00Z (Sunday)"},
		{map[string]any{"timezone": " Europe/Paris "}, "2026-11-22T19:00:00+01:00 (Sunday)"},
		{map[string]any{"timezone": "America/New_York"}, "2026-11-22T13:00:00-05:00 (Sunday)"},
		{map[string]any{"timezone": "Asia/Tokyo"}, "2026-11-23T03:00:00+09:00 (Monday)"},
		{map[string]any{"timezone": "Asia/Kolkata"}, "2026-11-22T23:30:00+05:30 (Sunday)"},
		{map[string]any{"timezone": "Pacific/Kiritimati"}, "2026-11-23T08:00:00+14:00 (Monday)"},
	} {
		got, err := c.Call(context.Background(), tc.input)
		if err != nil || got != tc.want {
			t.Errorf("%v = %q, %v; want %q", tc.input, got, err, tc.want)
		}
	}
}

func TestCurrentTimeSummer(t *testing.T) {
	// Daylight saving time comes from the zone database, not from a fixed offset.
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	c := clock{now: func() time.Time { return now }}
	got, err := c.Call(context.Background(), map[string]any{"timezone": "Europe/Paris"})
	if want := "2026-07-01T14:00:00+02:00 (Wednesday)"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

func TestCurrentTimeErrors(t *testing.T) {
	c := clock{now: time.Now}
	for _, tc := range []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"timezone": "Mars/Olympus_Mons"}, `unknown time zone "Mars/Olympus_Mons"`},
		{map[string]any{"timezone": "Local"}, `unknown time zone "Local"`},
		{map[string]any{"timezone": "../../etc/passwd"}, "unknown time zone"},
		{map[string]any{"timezone": "/etc/localtime"}, "unknown time zone"},
		{map[string]any{"timezone": 5.0}, "input.timezone must be a string, not a number"},
		{map[string]any{"tz": "UTC"}, `unknown property "tz"`},
		{map[string]any{"timezone": strings.Repeat("A", 65)}, "longer than 64 characters"},
	} {
		_, err := c.Call(context.Background(), tc.input)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want ErrInvalidInput containing %q", tc.input, err, tc.want)
		}
	}
}

func TestBuiltinsUseOptionsNow(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tool, _ := NewRegistry(Builtins(Options{Now: func() time.Time { return now }})...).Tool(NameCurrentTime)
	got, err := tool.Call(context.Background(), nil)
	if want := "2030-01-01T00:00:00Z (Tuesday)"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

func TestBuiltinSpecs(t *testing.T) {
	type shape struct {
		Properties []string
		Required   []string
	}
	want := map[string]shape{
		"calculator":   {[]string{"expression"}, []string{"expression"}},
		"current_time": {[]string{"timezone"}, []string{}},
		"http_request": {[]string{"body", "headers", "method", "url"}, []string{"url"}},
	}
	got := map[string]shape{}
	for _, tool := range Builtins(Options{}) {
		spec := tool.Spec()
		// The schema travels to the model as JSON: read it back the way a provider would.
		b, err := json.Marshal(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		var decoded struct {
			Name        string
			Description string
			Schema      struct {
				Type                 string
				Properties           map[string]map[string]any
				Required             []string
				AdditionalProperties *bool
			}
		}
		if err := json.Unmarshal(b, &decoded); err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		s := decoded.Schema
		if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: schema is not a closed object: %s", spec.Name, b)
		}
		if len(decoded.Description) < 40 {
			t.Errorf("%s: description %q is too thin for a model", spec.Name, decoded.Description)
		}
		var props []string
		for name, p := range s.Properties {
			props = append(props, name)
			if p["type"] == nil || p["description"] == nil {
				t.Errorf("%s.%s lacks a type or description", spec.Name, name)
			}
		}
		sort.Strings(props)
		got[spec.Name] = shape{props, s.Required}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schemas (-want +got):\n%s", diff)
	}
}
