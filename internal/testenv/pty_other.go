//go:build !linux

package testenv

import (
	"os"
	"testing"
)

// OpenPTY skips the test: pseudo-terminals for tests are opened on Linux only.
func OpenPTY(t testing.TB) (tty, master *os.File) {
	t.Helper()
	t.Skip("pseudo-terminals for tests are opened on Linux only")
	return nil, nil
}
