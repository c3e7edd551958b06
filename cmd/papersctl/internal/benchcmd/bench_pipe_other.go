//go:build !unix

package benchcmd

import (
	"errors"
	"os"
)

func openPipe(string) (r, w *os.File, err error) {
	return nil, nil, errors.New("benchmarks between processes need Linux")
}
