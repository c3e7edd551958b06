package launch_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ttlpapers/ttlpapers/launch"
)

// ExampleRun starts four processes of a PAPERS program (built from
// examples/spmd) on a fresh shared-memory board.
func ExampleRun() {
	rep, err := launch.Run(context.Background(), launch.Config{N: 4, Program: "./spmd"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if rep.Reason != "" {
		fmt.Fprintln(os.Stderr, rep.Reason) // e.g. "PE 2 was killed by signal killed", "stopped by interrupt"
	}
	os.Exit(rep.Status)
}
