//go:build !linux

package hil_test

// guestRole: the fault trials' roles run in Linux machines only.
func guestRole() {}
