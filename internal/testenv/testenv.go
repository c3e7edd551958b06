// Package testenv lets tests that need an outside tool (QEMU, FUSE, KiCad's
// libraries) skip with a message on a developer's machine, but fail in CI,
// which installs every such tool (.ci/run) and must never skip them.
package testenv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
)

// CI reports whether the tests run under .ci/run (CI=true).
func CI() bool { return os.Getenv("CI") == "true" }

// Missing skips the test with the reason, or fails it in CI.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if CI() {
		t.Fatalf("required in CI: "+format, args...)
	}
	t.Skipf(format, args...)
}

// FUSE skips the test (or fails it in CI) unless this user can mount a
// FUSE file system: /dev/fuse opens for reading and writing, and
// fusermount is installed. A normal user whose /dev/fuse is root's alone
// gets a skip naming the fix, not the mount's failure.
func FUSE(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		Missing(t, "no /dev/fuse: FUSE is unavailable here (load the fuse module; in a container pass --device /dev/fuse)")
	case errors.Is(err, fs.ErrPermission):
		Missing(t, "FUSE is not open to this user (%v): add the user to the group that owns /dev/fuse, or run the tests as root", err)
	case err != nil:
		Missing(t, "FUSE is unavailable here: %v", err)
	}
	f.Close()
	if _, err := exec.LookPath("fusermount3"); err != nil {
		if _, err := exec.LookPath("fusermount"); err != nil {
			Missing(t, "fusermount not found: apt-get install fuse3")
		}
	}
}

// EnvTrials, when set, is how many times the stress tests of the launcher
// and the self-test repeat each case (100 for the figures in the docs);
// by default they make a quick few, for CI.
const EnvTrials = "TTLPAPERS_RUN_TRIALS"

// Trials is the number of trials a stress test makes: $TTLPAPERS_RUN_TRIALS,
// or quick.
func Trials(t testing.TB, quick int) int {
	t.Helper()
	s := os.Getenv(EnvTrials)
	if s == "" {
		return quick
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number of trials", EnvTrials, s)
	}
	return n
}

// LoadAverage is the 1-minute load average, 0 if unknown.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var load float64
	fmt.Sscan(string(b), &load)
	return load
}

// Overloaded reports whether more processes want the CPUs than there are:
// a bound on how soon something happens is then about the machine, not
// the mechanism, and tests log it instead of failing.
func Overloaded() bool { return LoadAverage() > float64(runtime.NumCPU()) }

// EnvLong, set to 1, runs the long tests: QEMU machines, routing the
// boards, the 32-PE netlist, the fault trials. Without it they skip, so
// that the README's test command stays quick on a 2-core PC; .ci/run sets
// it, so CI runs every one of them (docs/testing.md).
const EnvLong = "TTLPAPERS_LONG_TESTS"

// LongTests reports whether EnvLong is 1: the long tests run, and tests
// that try a sample of cases by default try them all.
func LongTests() bool { return os.Getenv(EnvLong) == "1" }

// Long skips a test that takes more than about 30 s under the race
// detector on 2 cores unless EnvLong is 1.
func Long(t testing.TB, what string) {
	t.Helper()
	if !LongTests() {
		t.Skipf("long test (%s): run it with %s=1, as .ci/run does", what, EnvLong)
	}
}

// SlowUnderRace skips a test that takes minutes under the race detector
// and runs one goroutine: .ci/run runs such tests again without -race
// (the tests named in its slow-under-race step), so CI still runs them.
func SlowUnderRace(t testing.TB, why string) {
	t.Helper()
	if Race {
		t.Skipf("%s takes minutes under the race detector; .ci/run runs this test without it", why)
	}
}
