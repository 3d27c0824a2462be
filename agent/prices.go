package agent

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"threadflow/db"
)

// PricesFileEnv names a JSON file of model prices that replace or extend the built-in table.
const PricesFileEnv = "AGENT_PRICES_FILE"

// defaultPrices is the built-in price table: its source and date are in the file.
//
//go:embed prices.json
var defaultPrices []byte

// Price is what a model charges, in USD per million tokens.
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cached_input"`
	CacheWrite  float64 `json:"cache_write"`
	Output      float64 `json:"output"`
}

// Prices is a price table: a turn whose CLI reports tokens without a cost is priced from it, and
// its cost is marked estimated.
type Prices struct {
	Source string           `json:"source"`
	Date   string           `json:"date"`
	Models map[string]Price `json:"models"`
}

// DefaultPrices returns the built-in table.
func DefaultPrices() *Prices {
	p, err := parsePrices(defaultPrices)
	if err != nil {
		panic("agent/prices.json: " + err.Error()) // embedded: TestDefaultPricesParse keeps it valid
	}
	return p
}

// LoadPrices reads a price file (the shape of prices.json) over the built-in table: its models
// replace those of the same name, the others stay.
func LoadPrices(path string) (*Prices, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", PricesFileEnv, err)
	}
	over, err := parsePrices(b)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", PricesFileEnv, path, err)
	}
	p := DefaultPrices()
	p.Source, p.Date = over.Source, over.Date
	for m, price := range over.Models {
		p.Models[m] = price
	}
	return p, nil
}

// maxPriceFile bounds a price file: a table of every model ever sold is far smaller.
const maxPriceFile = 1 << 20

func parsePrices(b []byte) (*Prices, error) {
	if len(b) > maxPriceFile {
		return nil, fmt.Errorf("the file is larger than %d bytes", maxPriceFile)
	}
	var p Prices
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("not a price table (%v): see agent/prices.json for its shape", err)
	}
	if len(p.Models) == 0 {
		return nil, fmt.Errorf(`no "models": list each model's "input", "cached_input", "cache_write" and "output" in USD per million tokens`)
	}
	for m, price := range p.Models {
		for _, v := range []float64{price.Input, price.CachedInput, price.CacheWrite, price.Output} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 100_000 {
				return nil, fmt.Errorf("model %q: price %v is not between 0 and 100000 USD per million tokens", m, v)
			}
		}
	}
	return &p, nil
}

// lookup finds a model's price: by its exact name, else by the longest listed name it starts with
// followed by '-' (a dated release such as gpt-5-2025-08-07 is priced as gpt-5).
func (p *Prices) lookup(model string) (Price, bool) {
	if p == nil || model == "" {
		return Price{}, false
	}
	if price, ok := p.Models[model]; ok {
		return price, true
	}
	best, found := "", false
	for name := range p.Models {
		if strings.HasPrefix(model, name+"-") && len(name) > len(best) {
			best, found = name, true
		}
	}
	return p.Models[best], found
}

// estimate prices u's tokens, when the table lists its model; nil otherwise.
func (p *Prices) estimate(u db.AgentUsageData) *int64 {
	price, ok := p.lookup(u.Model)
	if !ok {
		return nil
	}
	// USD per million tokens is 1000 nanodollars per token.
	cost := float64(u.InputTokens)*price.Input + float64(u.CacheReadTokens)*price.CachedInput +
		float64(u.CacheWriteTokens)*price.CacheWrite + float64(u.OutputTokens)*price.Output
	n := int64(math.Round(cost * 1000))
	return &n
}
