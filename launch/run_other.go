//go:build !linux

package launch

import (
	"context"
	"errors"
)

// Run needs Linux: the shared-memory board its processes attach to waits on
// futexes. Elsewhere, run a program in-process with package emulate.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	return nil, errors.New("launch: running processes on a shared board needs Linux (the board uses futexes); on this system run the program in-process with package emulate, or on a Linux machine")
}
