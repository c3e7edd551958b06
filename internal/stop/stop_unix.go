//go:build unix

package stop

import (
	"os"

	"golang.org/x/sys/unix"
)

// Signals are SIGINT, SIGTERM and SIGHUP.
var Signals = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP}

func number(sig os.Signal) int {
	if s, ok := sig.(unix.Signal); ok {
		return int(s)
	}
	return int(unix.SIGINT)
}
