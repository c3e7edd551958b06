package papers

import (
	"context"

	"github.com/ttlpapers/ttlpapers/emu"
)

// Emulate runs fn as an SPMD program of n PEs on an in-process emulated
// board: each PE runs fn concurrently with its own *PE, opened with cfg (PE
// and PEs are filled in) and closed when fn returns. When one PE fails, the
// others' waits are abandoned at once. The error joins every PE's error.
func Emulate(n int, cfg Config, fn func(*PE) error) error {
	b, err := emu.New(n)
	if err != nil {
		return err
	}
	return EmulateOn(b, n, cfg, fn)
}

// EmulateOn is Emulate on a given emulated board (with faults injected, or
// built from a particular netlist); it runs PEs 0 to n-1.
func EmulateOn(b *emu.Board, n int, cfg Config, fn func(*PE) error) error {
	ctx := cfg.Context
	if ctx == nil {
		ctx = context.Background()
	}
	return b.Run(ctx, n, func(ctx context.Context, k int, port *emu.Port) error {
		c := cfg
		c.PE, c.PEs, c.Context = k, n, ctx
		p, err := Open(port, c)
		if err != nil {
			return err
		}
		defer p.Close()
		return fn(p)
	})
}
