package benchcmd

import (
	"os"
	"testing"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base/basetest"
	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
)

// runCLI runs a papersctl command line in-process.
var runCLI = basetest.Run

// TestMain fails the tests when they leave goroutines running. The PE
// processes bench starts are this test binary run as papersctl bench-pe.
func TestMain(m *testing.M) {
	base.Commands = []*base.Command{Cmd, PECmd}
	if len(os.Args) > 1 && os.Args[1] == benchPEName {
		base.Main()
	}
	os.Exit(leakcheck.Run(m))
}
