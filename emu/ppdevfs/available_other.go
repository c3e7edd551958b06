//go:build !linux

package ppdevfs

import "errors"

var errNotLinux = errors.New("ppdevfs: boards are served as ppdev files over FUSE on Linux only")

// Available reports that FUSE boards are served on Linux only.
func Available() error { return errNotLinux }
