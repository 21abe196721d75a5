package llm

import "strings"

// Price is what a model costs in US dollars per million tokens.
type Price struct {
	InputPerMTok  float64 `json:"input_per_mtok"`
	OutputPerMTok float64 `json:"output_per_mtok"`
}

// Prices maps a model name, or a prefix of dated model names, to its price.
type Prices map[string]Price

// DefaultPrices returns list prices (USD, standard tier, no batch or cache
// discounts) for common hosted models; a fresh map each call, so a caller
// may override entries. Self-hosted models are absent and cost 0.
func DefaultPrices() Prices {
	return Prices{
		"gpt-5":             {1.25, 10},
		"gpt-5-mini":        {0.25, 2},
		"gpt-5-nano":        {0.05, 0.40},
		"gpt-4.1":           {2, 8},
		"gpt-4.1-mini":      {0.40, 1.60},
		"gpt-4.1-nano":      {0.10, 0.40},
		"gpt-4o":            {2.50, 10},
		"gpt-4o-mini":       {0.15, 0.60},
		"o3":                {2, 8},
		"o4-mini":           {1.10, 4.40},
		"claude-opus-4-5":   {5, 25},
		"claude-opus-4-1":   {15, 75},
		"claude-opus-4":     {15, 75},
		"claude-sonnet-4-5": {3, 15},
		"claude-sonnet-4":   {3, 15},
		"claude-3-7-sonnet": {3, 15},
		"claude-haiku-4-5":  {1, 5},
		"claude-3-5-haiku":  {0.80, 4},
	}
}

// Lookup finds the price of model: an exact entry, else the longest entry
// that prefixes it followed by "-" (so "gpt-4o-mini-2024-07-18" is priced as
// "gpt-4o-mini", never as "gpt-4o").
func (p Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	best, found := "", false
	for name := range p {
		if len(name) > len(best) && strings.HasPrefix(model, name+"-") {
			best, found = name, true
		}
	}
	return p[best], found
}

// Cost is the price of usage on model in US dollars; 0 for unknown models.
func (p Prices) Cost(model string, u Usage) float64 {
	pr, ok := p.Lookup(model)
	if !ok {
		return 0
	}
	return (float64(u.InputTokens)*pr.InputPerMTok + float64(u.OutputTokens)*pr.OutputPerMTok) / 1e6
}
