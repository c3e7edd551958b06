package linuxlpt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNotAPort: a directory, a regular file or /dev/null named as a ppdev
// port is refused with what it is and what to name instead, not a bare
// errno.
func TestNotAPort(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path  string
		errno unix.Errno
		want  string
	}{
		{dir, unix.EISDIR, "is a directory: name the port's device in it, such as " + dir + "/parport0"},
		{file, unix.ENOTTY, "is not a parallel port"},
		{"/dev/null", unix.ENOTTY, "is not a parallel port"},
	} {
		p, err := OpenPPDev(c.path)
		if err == nil {
			p.Close()
			t.Errorf("%s: opened", c.path)
			continue
		}
		if !errors.Is(err, c.errno) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %v and %q", c.path, err, c.errno, c.want)
		}
	}
}
