package llm

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// Price is what a model costs, in USD per million tokens.
type Price struct {
	Prompt     float64 `json:"prompt"`
	Completion float64 `json:"completion"`
}

// Prices maps model names to prices. A model name that is not a key is
// priced by the longest key it starts with, so "gpt-4o-mini" also prices the
// dated "gpt-4o-mini-2024-07-18" a server reports.
type Prices map[string]Price

// Lookup returns the price of model and whether one is known.
func (p Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	best, found := "", false
	for name := range p {
		if name != "" && strings.HasPrefix(model, name) && len(name) > len(best) {
			best, found = name, true
		}
	}
	return p[best], found
}

// Cost is the USD cost of u on model, 0 when its price is unknown.
func (p Prices) Cost(model string, u Usage) float64 {
	pr, _ := p.Lookup(model)
	return (float64(u.PromptTokens)*pr.Prompt + float64(u.CompletionTokens)*pr.Completion) / 1e6
}

// MeterRow is the accounting of one (role, operation, model).
type MeterRow struct {
	Role      Role
	Operation string
	// Model is the model that answered as the server reports it, or the
	// name given to Wrap when the call failed before any answer.
	Model string
	// Calls counts every call, including failed and cached ones.
	Calls int
	// Errors counts calls that returned an error.
	Errors int
	// Cached counts calls answered from a cache. Their tokens are not in
	// Usage and cost nothing.
	Cached int
	// Usage sums the tokens of calls that reached a server.
	Usage Usage
	// Requests sums the HTTP requests the calls made (Response.Requests:
	// retries, format downgrades included; cached calls count none).
	Requests int
	// Latency sums the wall time of all calls.
	Latency time.Duration
	// Cost is Usage priced with the meter's price table, in USD.
	Cost float64
}

// meterKey identifies a MeterRow.
type meterKey struct {
	role  Role
	op    string
	model string
}

// Meter counts calls, errors, tokens, latency and cost of the models it
// wraps, per role, operation and model. It is safe for concurrent use; the
// zero value is not usable, call NewMeter.
type Meter struct {
	mu     sync.Mutex // guards rows and prices
	rows   map[meterKey]*MeterRow
	prices Prices
}

// NewMeter returns a Meter pricing calls with prices (nil: everything is
// free). The map is copied.
func NewMeter(prices Prices) *Meter {
	m := &Meter{rows: map[meterKey]*MeterRow{}, prices: Prices{}}
	for k, v := range prices {
		m.prices[k] = v
	}
	return m
}

// SetPrice sets the price of a model. Costs are computed at Snapshot, so
// calls made before the change are repriced too.
func (m *Meter) SetPrice(model string, p Price) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prices[model] = p
}

// Wrap returns a Model that forwards to model and records every call under
// role and the request's Operation. name labels calls that fail before the
// server names the model; it may be empty.
//
// The returned Model has a ModelName method (name, or the inner model's
// ModelName when name is empty), so a cache wrapped around it still keys
// by model.
func (m *Meter) Wrap(role Role, name string, model Model) Model {
	if name == "" {
		if n, ok := model.(interface{ ModelName() string }); ok {
			name = n.ModelName()
		}
	}
	return &metered{meter: m, role: role, name: name, inner: model}
}

// metered is a Model recorded by a Meter.
type metered struct {
	meter *Meter
	role  Role
	name  string
	inner Model
}

// Complete forwards to the inner model and records the call.
func (w *metered) Complete(ctx context.Context, req Request) (Response, error) {
	start := time.Now()
	resp, err := w.inner.Complete(ctx, req)
	w.meter.record(w.role, w.name, req.Operation, resp, err, time.Since(start))
	return resp, err
}

// ModelName returns the model name the wrapper was given.
func (w *metered) ModelName() string { return w.name }

// Forget implements Forgetter when the wrapped model does (and drops
// nothing otherwise).
func (w *metered) Forget(ctx context.Context, needles []string) (int, error) {
	if f, ok := w.inner.(Forgetter); ok {
		return f.Forget(ctx, needles)
	}
	return 0, nil
}

// record adds one call.
func (m *Meter) record(role Role, name, op string, resp Response, err error, d time.Duration) {
	model := resp.Model
	if model == "" {
		model = name
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := meterKey{role, op, model}
	r := m.rows[k]
	if r == nil {
		r = &MeterRow{Role: role, Operation: op, Model: model}
		m.rows[k] = r
	}
	r.Calls++
	r.Latency += d
	if !resp.Cached {
		r.Requests += resp.Requests
	}
	switch {
	case err != nil:
		r.Errors++
		r.Usage = r.Usage.Add(resp.Usage) // tokens a failed call still spent
	case resp.Cached:
		r.Cached++
	default:
		r.Usage = r.Usage.Add(resp.Usage)
	}
}

// Snapshot returns the rows recorded so far, priced, sorted by role,
// operation and model.
func (m *Meter) Snapshot() []MeterRow {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]MeterRow, 0, len(m.rows))
	for _, r := range m.rows {
		row := *r
		row.Cost = m.prices.Cost(row.Model, row.Usage)
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b MeterRow) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Model, b.Model))
	})
	return out
}

// Total sums all rows; its Role, Operation and Model are empty.
func (m *Meter) Total() MeterRow {
	var t MeterRow
	for _, r := range m.Snapshot() {
		t.Calls += r.Calls
		t.Errors += r.Errors
		t.Cached += r.Cached
		t.Requests += r.Requests
		t.Usage = t.Usage.Add(r.Usage)
		t.Latency += r.Latency
		t.Cost += r.Cost
	}
	return t
}

// Cost is the total USD cost of all calls so far.
func (m *Meter) Cost() float64 { return m.Total().Cost }

// Reset forgets all rows (prices are kept).
func (m *Meter) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows = map[meterKey]*MeterRow{}
}
