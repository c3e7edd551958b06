//go:build linux

package launch_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ttlpapers/ttlpapers/launch"
)

// Four processes of a PAPERS program on a fresh shared-memory board. The
// program here is this test binary, which TestMain turns into a PE (see
// votePE in main_test.go): it opens its PE from the environment launch
// sets, votes, and prints what it saw. Each line comes prefixed by its PE.
func ExampleRun_vote() {
	rep, err := launch.Run(context.Background(), launch.Config{
		N: 4, Program: os.Args[0], Env: []string{examplePE + "=1"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("status:", rep.Status)
	// Unordered output:
	// [PE 0] PE 0 of 4: votes 0101
	// [PE 1] PE 1 of 4: votes 0101
	// [PE 2] PE 2 of 4: votes 0101
	// [PE 3] PE 3 of 4: votes 0101
	// status: 0
}
