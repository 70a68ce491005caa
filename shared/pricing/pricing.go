// Package pricing prices model calls: a table of list prices per model (USD per million input
// and output tokens), overridable by configuration, and the cost of a run's calls. A model
// that is not in the table has no price: its cost is unknown (nil), never a guess.
package pricing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Price is a model's list price in USD per million tokens.
type Price struct {
	InputPerMTok  float64 `json:"input_per_mtok"`
	OutputPerMTok float64 `json:"output_per_mtok"`
}

// Cost is what in input and out output tokens cost at p, in USD.
func (p Price) Cost(in, out int) float64 {
	return (float64(in)*p.InputPerMTok + float64(out)*p.OutputPerMTok) / 1e6
}

// Table maps "provider/model" (as llm_config names them, e.g. "bedrock/amazon.nova-lite-v1:0")
// to its price.
type Table map[string]Price

// Key is the table's key of a provider's model.
func Key(provider, model string) string { return provider + "/" + model }

// ListPricesDate is when ListPrices was taken from the providers' pages.
const ListPricesDate = "2026-11-27"

// ListPrices are the providers' published on-demand list prices, as of ListPricesDate, for the
// models the service knows (the providers' defaults and the models its docs and examples name).
// Sources: OpenAI https://openai.com/api/pricing/ (standard tier); Amazon Bedrock
// https://aws.amazon.com/bedrock/pricing/ (on-demand, us-east-1). Bedrock's cross-region
// inference profiles of the older models ("us.…") are charged at the source region's price; the
// regional profiles of Claude 4.5 models carry a premium over "global." and are left out
// (unknown) rather than guessed. Batch, cached-input and long-context prices are not modelled:
// cost_usd is the list price of the tokens the model reported.
func ListPrices() Table {
	return Table{
		// OpenAI (https://openai.com/api/pricing/)
		"openai/gpt-4.1":      {2.00, 8.00},
		"openai/gpt-4.1-mini": {0.40, 1.60},
		"openai/gpt-4.1-nano": {0.10, 0.40},
		"openai/gpt-4o":       {2.50, 10.00},
		"openai/gpt-4o-mini":  {0.15, 0.60},
		"openai/gpt-5":        {1.25, 10.00},
		"openai/gpt-5-mini":   {0.25, 2.00},
		"openai/gpt-5-nano":   {0.05, 0.40},
		"openai/o3":           {2.00, 8.00},
		"openai/o3-mini":      {1.10, 4.40},
		"openai/o4-mini":      {1.10, 4.40},
		// Amazon Bedrock (https://aws.amazon.com/bedrock/pricing/)
		"bedrock/global.anthropic.claude-haiku-4-5-20251001-v1:0":  {1.00, 5.00},
		"bedrock/global.anthropic.claude-sonnet-4-5-20250929-v1:0": {3.00, 15.00},
		"bedrock/anthropic.claude-sonnet-4-20250514-v1:0":          {3.00, 15.00},
		"bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0":       {3.00, 15.00},
		"bedrock/anthropic.claude-3-5-haiku-20241022-v1:0":         {0.80, 4.00},
		"bedrock/us.anthropic.claude-3-5-haiku-20241022-v1:0":      {0.80, 4.00},
		"bedrock/anthropic.claude-3-haiku-20240307-v1:0":           {0.25, 1.25},
		"bedrock/us.anthropic.claude-3-haiku-20240307-v1:0":        {0.25, 1.25},
		"bedrock/amazon.nova-micro-v1:0":                           {0.035, 0.14},
		"bedrock/us.amazon.nova-micro-v1:0":                        {0.035, 0.14},
		"bedrock/amazon.nova-lite-v1:0":                            {0.06, 0.24},
		"bedrock/us.amazon.nova-lite-v1:0":                         {0.06, 0.24},
		"bedrock/amazon.nova-pro-v1:0":                             {0.80, 3.20},
		"bedrock/us.amazon.nova-pro-v1:0":                          {0.80, 3.20},
		"bedrock/mistral.mistral-large-2407-v1:0":                  {2.00, 6.00},
		"bedrock/mistral.mistral-7b-instruct-v0:2":                 {0.15, 0.20},
	}
}

// Parse reads the MODEL_PRICES override: a JSON object from "provider/model" to
// {"input_per_mtok": n, "output_per_mtok": n}. Empty is no override. Every entry needs both
// prices, finite and not negative; a key needs a provider and a model.
func Parse(s string) (Table, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var raw map[string]*struct {
		Input  *float64 `json:"input_per_mtok"`
		Output *float64 `json:"output_per_mtok"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf(`not a JSON object of "provider/model": {"input_per_mtok": n, "output_per_mtok": n}: %w`, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON object")
	}
	if raw == nil {
		return nil, fmt.Errorf(`not a JSON object of "provider/model": {"input_per_mtok": n, "output_per_mtok": n}`)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t := Table{}
	for _, k := range keys {
		e := raw[k]
		provider, model, ok := strings.Cut(k, "/")
		switch {
		case !ok || provider == "" || model == "":
			return nil, fmt.Errorf("%q: the key must be provider/model, e.g. \"bedrock/amazon.nova-lite-v1:0\"", k)
		case e == nil || e.Input == nil || e.Output == nil:
			return nil, fmt.Errorf("%q: input_per_mtok and output_per_mtok are both required", k)
		case !valid(*e.Input) || !valid(*e.Output):
			return nil, fmt.Errorf("%q: prices must be finite numbers, not negative", k)
		}
		t[k] = Price{InputPerMTok: *e.Input, OutputPerMTok: *e.Output}
	}
	return t, nil
}

func valid(f float64) bool { return f >= 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }
