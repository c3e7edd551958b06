package leakcheck_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

var stuck = make(chan struct{})

// plantedLeak starts a goroutine that nothing ends.
func plantedLeak() {
	go func() { <-stuck }()
}

func TestLeakedFindsAndForgets(t *testing.T) {
	before := leakcheck.Goroutines()
	release := make(chan struct{})
	go blockedOn(release)
	leaked := leakcheck.Leaked(before, 50*time.Millisecond)
	if len(leaked) != 1 || !strings.Contains(leaked[0].Stack, "blockedOn") {
		t.Fatalf("Leaked = %+v, want the one goroutine in blockedOn", leaked)
	}
	if r := leakcheck.Report(leaked, time.Second); !strings.Contains(r, "blockedOn") || !strings.Contains(r, "1 goroutine(s)") {
		t.Errorf("report does not show the stack:\n%s", r)
	}
	close(release)
	if leaked := leakcheck.Leaked(before, 10*time.Second); len(leaked) != 0 {
		t.Errorf("after the goroutine ended, Leaked = %+v", leaked)
	}
}

func blockedOn(c chan struct{}) { <-c }

// TestRunFailsOnALeak runs this test binary again with a goroutine
// planted in a test that otherwise passes: Run must fail it and show the
// goroutine's stack.
func TestRunFailsOnALeak(t *testing.T) {
	if os.Getenv("LEAKCHECK_PLANT") != "" {
		plantedLeak() // the child
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunFailsOnALeak$")
	cmd.Env = append(os.Environ(), "LEAKCHECK_PLANT=1", "LEAKCHECK_WAIT=100ms")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("with a planted leak the tests exited with %v, want code 1; stderr:\n%s", err, &stderr)
	}
	if !strings.Contains(stderr.String(), "leakcheck:") || !strings.Contains(stderr.String(), "plantedLeak") {
		t.Errorf("the failure does not show the leaked goroutine's stack:\n%s", &stderr)
	}
}
