package pricing

// Book prices model calls as the deployment makes them: a call that names no provider or no
// model uses the deployment's default, as the engine's model set does.
type Book struct {
	prices          Table
	defaultProvider string
	defaultModels   map[string]string // provider → the model it uses when none is named
}

// Defaults are the provider and models a call gets when its configuration names none.
type Defaults struct {
	Provider string
	Models   map[string]string
}

// NewBook builds a book of ListPrices with override's entries added or replacing theirs.
func NewBook(override Table, d Defaults) *Book {
	t := ListPrices()
	for k, p := range override {
		t[k] = p
	}
	return &Book{prices: t, defaultProvider: d.Provider, defaultModels: d.Models}
}

// Local is the provider of the offline development model (shared/localmodel): it runs in the
// process and costs nothing, so its calls cost 0 rather than an unknown.
const Local = "local"

// Cost is what one call of provider's model with in and out tokens costs, in USD; ok is false
// when the model has no price.
func (b *Book) Cost(provider, model string, in, out int) (usd float64, ok bool) {
	if b == nil {
		return 0, false
	}
	if provider == "" {
		provider = b.defaultProvider
	}
	if provider == Local {
		return 0, true
	}
	if model == "" {
		model = b.defaultModels[provider]
	}
	p, ok := b.prices[Key(provider, model)]
	if !ok || model == "" {
		return 0, false
	}
	return p.Cost(in, out), true
}

// Meter sums the cost of a run's calls. Its zero value has priced nothing; once a call has no
// price the total is unknown for good.
type Meter struct {
	usd     float64
	unknown bool
}

// Add counts one call's cost (ok false: no price).
func (m *Meter) Add(usd float64, ok bool) {
	if !ok {
		m.unknown = true
	}
	m.usd += usd
}

// Total is the cost so far, or nil when some call had no price.
func (m *Meter) Total() *float64 {
	if m.unknown {
		return nil
	}
	v := m.usd
	return &v
}

// Plus is the meter of m's calls and o's.
func (m Meter) Plus(o Meter) Meter {
	return Meter{usd: m.usd + o.usd, unknown: m.unknown || o.unknown}
}

// Unknown reports whether a call had no price.
func (m Meter) Unknown() bool { return m.unknown }

// Priced is the cost of the calls that had a price.
func (m Meter) Priced() float64 { return m.usd }
