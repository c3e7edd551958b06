//go:build !linux

package qemu

import "os/exec"

// dieWithParent does nothing: only Linux kills a child with its parent.
func dieWithParent(*exec.Cmd) {}
