// Package testenv lets tests that need an outside tool (QEMU, FUSE, KiCad's
// libraries) skip with a message on a developer's machine, but fail in CI,
// which installs every such tool (.ci/run) and must never skip them.
package testenv

import (
	"os"
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

// SlowUnderRace skips a test that takes minutes under the race detector
// and runs one goroutine: .ci/run runs such tests again without -race
// (the tests named in its slow-under-race step), so CI still runs them.
func SlowUnderRace(t testing.TB, why string) {
	t.Helper()
	if Race {
		t.Skipf("%s takes minutes under the race detector; .ci/run runs this test without it", why)
	}
}
