//go:build !linux

package emu_test

// helperMain has nothing to do: the cross-process tests are Linux's.
func helperMain() {}
