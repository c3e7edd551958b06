//go:build linux

package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunUsageOnce: a wrong flag to the program under run -n 4 prints the
// program's usage once (PE 0's), not four times, and the run exits 2.
func TestRunUsageOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds papersctl and examples/spmd; skipped with -short")
	}
	ctl := build(t)
	prog := filepath.Join(t.TempDir(), "spmd")
	if out, err := exec.Command("go", "build", "-o", prog, "../../examples/spmd").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(ctl, "run", "-np", "4", "-dir", t.TempDir(), "--", prog, "-bogus")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("exit %v, want status 2", err)
	}
	if n := strings.Count(stderr.String(), "Usage of"); n != 1 || !strings.Contains(stderr.String(), "[PE 0] flag provided but not defined: -bogus") {
		t.Errorf("usage printed %d times, want once, by PE 0:\n%s", n, stderr.String())
	}
}
