package axis

import (
	"math"
	"testing"
)

func TestStep(t *testing.T) {
	for x, want := range map[float64]float64{-1: 1, 0.3: 0.5, 1: 1, 1.2: 2, 3: 5, 7: 10, 120: 200} {
		if got := Step(x); math.Abs(got-want) > 1e-9 {
			t.Errorf("Step(%v) = %v, want %v", x, got, want)
		}
	}
}
