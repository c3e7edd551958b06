package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
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
	status = Dispatch(args, &Env{Ctx: context.Background(), Stdin: null, Stdout: &out, Stderr: &errOut})
	return out.String(), errOut.String(), status
}

func TestOnePrefixPerLayer(t *testing.T) {
	for _, msg := range []string{"hil: 0 machines", "emu: fault x", "launch: board in use"} {
		var b strings.Builder
		ReportFailure(&b, fmt.Errorf("%w", errors.New(msg)))
		if got, want := b.String(), "papersctl: "+msg+"\n"; got != want {
			t.Errorf("%q shown as %q, want %q", msg, got, want)
		}
	}
}

// TestHilGuestParses: the command line the hil machines' kernel gives
// papersctl as init (hil.Run's rdinit arguments) passes the checks: it
// takes no command, the machine reads it from the initramfs.
func TestHilGuestParses(t *testing.T) {
	if _, _, _, err := Prepare(Lookup(Commands, "hil"), "papersctl hil", []string{"--guest", "--pe", "3", "--pes", "4"}); err != nil {
		t.Errorf("hil --guest --pe 3 --pes 4: %v", err)
	}
}
