// Package axis holds what the project's SVG pictures share for their time
// axes (strata's timelines, emu/vcd's waveforms).
package axis

import "math"

// Step rounds x up to 1, 2 or 5 times a power of ten: the tick spacing
// for an axis that should show about range/x ticks.
func Step(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}
