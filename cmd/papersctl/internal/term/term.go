// Package term tells whether a stream is an interactive terminal, for output
// meant for a person at it and nobody else: a progress line rewritten in
// place, a question waiting for an answer. Pipes, files, /dev/null and
// consoles without a terminal driver are not terminals.
package term

import "os"

// IsTerminal reports whether v is an *os.File open on a terminal.
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	// SyscallConn, not Fd: Fd would switch the file to blocking mode.
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	is := false
	if err := rc.Control(func(fd uintptr) { is = isTerminal(fd) }); err != nil {
		return false
	}
	return is
}
