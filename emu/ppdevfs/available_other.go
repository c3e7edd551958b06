//go:build !linux

package ppdevfs

import "errors"

// Available reports that FUSE boards are served on Linux only.
func Available() error {
	return errors.New("ppdevfs: boards are served as ppdev files over FUSE on Linux only")
}
