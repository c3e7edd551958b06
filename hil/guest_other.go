//go:build !(linux && amd64)

package hil

import "errors"

// Guest runs only inside the linux/amd64 machines Run boots.
func Guest(pe, pes int) error {
	return errors.New("hil: the guest side runs only in linux/amd64 machines booted by papersctl hil")
}
