package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
)

// runCLI runs a papersctl command line in-process and returns its stdout,
// stderr and exit status. Its stdin is /dev/null.
func runCLI(args ...string) (stdout, stderr string, status int) {
	var out, errOut bytes.Buffer
	null, err := os.Open(os.DevNull)
	if err != nil {
		panic(err)
	}
	defer null.Close()
	status = dispatch(args, &env{ctx: context.Background(), stdin: null, stdout: &out, stderr: &errOut})
	return out.String(), errOut.String(), status
}

func TestOnePrefixPerLayer(t *testing.T) {
	for _, c := range []struct{ path, msg, want string }{
		{"papersctl hil", "hil: 0 machines", "0 machines"},
		{"papersctl emu serve", "emu: fault x", "fault x"},
		{"papersctl selftest", "selftest: unknown mode", "unknown mode"},
		{"papersctl run", "launch: board in use", "launch: board in use"}, // another layer: kept
	} {
		if got := unprefixed(errors.New(c.msg), c.path); got != c.want {
			t.Errorf("%s: %q shown as %q, want %q", c.path, c.msg, got, c.want)
		}
	}
}

// TestHilGuestParses: the command line the hil machines' kernel gives
// papersctl as init (hil.Run's rdinit arguments) passes the checks: it
// takes no command, the machine reads it from the initramfs.
func TestHilGuestParses(t *testing.T) {
	if _, _, _, err := prepare(lookup(commands, "hil"), "papersctl hil", []string{"--guest", "--pe", "3", "--pes", "4"}); err != nil {
		t.Errorf("hil --guest --pe 3 --pes 4: %v", err)
	}
}
