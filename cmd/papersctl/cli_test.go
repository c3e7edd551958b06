package main

import (
	"testing"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base/basetest"
)

// runCLI runs a papersctl command line in-process.
var runCLI = basetest.Run

// TestHilGuestParses: the command line the hil machines' kernel gives
// papersctl as init (hil.Run's rdinit arguments) passes the checks: it
// takes no command, the machine reads it from the initramfs.
func TestHilGuestParses(t *testing.T) {
	if _, _, _, err := base.Prepare(base.Lookup(base.Commands, "hil"), "papersctl hil", []string{"--guest", "--pe", "3", "--pes", "4"}); err != nil {
		t.Errorf("hil --guest --pe 3 --pes 4: %v", err)
	}
}
