package config

import (
	"sort"
	"strings"

	"staage/agent"
)

// Price is USD per million tokens.
type Price struct {
	Input      float64 `toml:"input" json:"input"`
	Output     float64 `toml:"output" json:"output"`
	CacheRead  float64 `toml:"cache_read" json:"cacheRead"`
	CacheWrite float64 `toml:"cache_write" json:"cacheWrite"`
}

// defaultPrices are list prices known when this was written (USD per
// million tokens). They only feed the cost estimate in the status bar; the
// operator's [prices] table overrides them.
func defaultPrices() map[string]Price {
	return map[string]Price{
		"anthropic/claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
		"anthropic/claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
		"anthropic/claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"anthropic/claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		"anthropic/claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
		"openai/gpt-5":                {Input: 1.25, Output: 10, CacheRead: 0.125},
		"openai/gpt-5-mini":           {Input: 0.25, Output: 2, CacheRead: 0.025},
		"openai/gpt-4.1":              {Input: 2, Output: 8, CacheRead: 0.5},
		"openai/gpt-4.1-mini":         {Input: 0.4, Output: 1.6, CacheRead: 0.1},
		"openai/gpt-4o":               {Input: 2.5, Output: 10, CacheRead: 1.25},
	}
}

// lookupPrice finds the price of provider/model: an exact entry, else the
// longest entry the model id starts with ("claude-sonnet-4-5-20250929"
// takes "claude-sonnet-4-5"), keyed with or without the provider. Local
// servers cost nothing unless the table says otherwise.
func lookupPrice(table map[string]Price, provider, model string, local bool) (Price, bool) {
	full := provider + "/" + model
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	// Longest first, so the most specific entry wins.
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		if k == full || k == model {
			return table[k], true
		}
	}
	for _, k := range keys {
		if strings.HasPrefix(full, k+"-") || strings.HasPrefix(model, k+"-") {
			return table[k], true
		}
	}
	if local {
		return Price{}, true
	}
	return Price{}, false
}

// Cost is the estimated USD cost of one response's usage; zero when the
// price is unknown (PriceKnown says which).
func (c Config) Cost(u agent.Usage) float64 {
	if !c.PriceKnown {
		return 0
	}
	p := c.Price
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead + float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6
}
