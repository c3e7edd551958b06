//go:build unix

package benchcmd

import (
	"os"
	"syscall"
)

// openPipe makes a named pipe at path and opens it for reading, with a
// writer of its own so that reads wait for data rather than end while no
// PE has it open yet (opening the reader without blocking, then the
// writer, as no other process is there to meet either).
func openPipe(path string) (r, w *os.File, err error) {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, nil, err
	}
	if r, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err != nil {
		return nil, nil, err
	}
	if w, err = os.OpenFile(path, os.O_WRONLY, 0); err != nil {
		r.Close()
		return nil, nil, err
	}
	return r, w, nil
}
