package emu

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Run runs fn once for each of PEs 0 to n-1, concurrently, each with its own port, and
// waits for all of them. The context passed to fn is cancelled as soon as
// any PE returns an error or panics, so the others can stop waiting instead
// of running into their deadlines. The result joins every PE's error,
// prefixed with its PE number.
func (b *Board) Run(ctx context.Context, n int, fn func(ctx context.Context, pe int, port *Port) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if n < 1 || n > len(b.ports) {
		return fmt.Errorf("emu: cannot run %d PEs on the %d-PE board", n, len(b.ports))
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := 0; k < n; k++ {
		port, err := b.Port(k)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer port.Close()
			defer func() {
				if r := recover(); r != nil {
					errs[k] = fmt.Errorf("PE %d: panic: %v", k, r)
					cancel(errs[k])
				}
			}()
			if err := fn(ctx, k, port); err != nil {
				errs[k] = fmt.Errorf("PE %d: %w", k, err)
				cancel(errs[k])
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
