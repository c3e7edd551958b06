package timed

import (
	"fmt"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// BenchmarkZeroDelayWriteSettle is emu's BenchmarkWriteSettle on a timed
// board with no delays: one data write that flips the strobes, the board
// settled through the event queue, and a status read. Run beside emu's, it
// measures what simulating the untimed board as the timed one (delay 0)
// would cost (the package comment gives the ratio).
func BenchmarkZeroDelayWriteSettle(b *testing.B) {
	for _, n := range []int{4, 8, 32} {
		b.Run(fmt.Sprintf("pes=%d", n), func(b *testing.B) {
			tb, err := New(Config{PEs: n, Delays: NoDelay})
			if err != nil {
				b.Fatal(err)
			}
			v := uint8(lpt.S1 | lpt.LG | lpt.DataMask)
			now := time.Duration(0)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				v ^= lpt.Strobes
				tb.write(0, v, 0)
				now += time.Nanosecond
				tb.runUntil(now)
				tb.status(0)
			}
		})
	}
}
