package timing

import (
	"context"
	"time"

	"github.com/ttlpapers/ttlpapers/emu/timed"
)

// Margin is how far one variant goes on one kind of port: the longest
// cable (every PE's the same, at the params' skew) and the largest skew
// (at the params' cable lengths) of the ones tried at which it had no
// failure in Trials trials — nor at any shorter or smaller one.
type Margin struct {
	Op        string  `json:"op"`
	Variant   string  `json:"variant"`
	Port      string  `json:"port"`
	Trials    int     `json:"trials"`
	MaxMetres float64 `json:"max_cable_m"` // -1: failed at the shortest tried
	// MaxSkew is in ns; -1: failed without skew.
	MaxSkew time.Duration `json:"max_skew_ns"`
	// Beyond says the variant passed everything tried: the margin is at
	// least the largest value (a lower bound).
	BeyondMetres bool `json:"beyond_cable"`
	BeyondSkew   bool `json:"beyond_skew"`
}

// MarginMetres and MarginSkews are the cable lengths and skews Margins
// tries, in order.
var (
	MarginMetres = []float64{0.5, 1, 2, timed.TenFeet, 5, 7.5, 10, 15, 20, 30}
	MarginSkews  = []time.Duration{0, 5, 10, 20, 50, 100, 200, 500, 1000}
)

// Margins finds each variant's margins on each kind of port, with the
// port's own timing in place of p.Port. It stops at a variant's first
// failure at each step.
func Margins(ctx context.Context, p Params, variants []Variant, ports []timed.PortTiming, trials int) ([]Margin, error) {
	var out []Margin
	for _, port := range ports {
		q := p
		q.Port = port
		for _, v := range variants {
			m := Margin{Op: v.Op, Variant: v.Name, Port: port.Name, Trials: trials, MaxMetres: -1, MaxSkew: -1}
			var err error
			if m.MaxMetres, m.BeyondMetres, err = sweep(ctx, q, v, trials, MarginMetres, func(q *Params, m float64) { q.Metres = [2]float64{m, m} }); err != nil {
				return nil, err
			}
			skews := make([]float64, len(MarginSkews))
			for i, s := range MarginSkews {
				skews[i] = float64(s)
			}
			s, beyond, err := sweep(ctx, q, v, trials, skews, func(q *Params, s float64) { q.Skew = time.Duration(s) * time.Nanosecond })
			if err != nil {
				return nil, err
			}
			m.MaxSkew, m.BeyondSkew = time.Duration(s), beyond
			out = append(out, m)
		}
	}
	return out, nil
}

// sweep returns the last of values at which v passed every trial, trying
// them in order until one fails (-1 when the first does), and whether it
// passed them all.
func sweep(ctx context.Context, p Params, v Variant, trials int, values []float64, set func(*Params, float64)) (float64, bool, error) {
	last := -1.0
	for _, x := range values {
		q := p
		set(&q, x)
		res, err := Run(ctx, q, []Variant{v}, trials, true)
		if err != nil {
			return 0, false, err
		}
		if res[0].Failures > 0 {
			return last, false, nil
		}
		last = x
	}
	return last, true, nil
}
