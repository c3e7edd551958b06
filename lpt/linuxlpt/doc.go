// Package linuxlpt drives real printer ports on Linux, each behind the
// lpt.Port interface: direct I/O (ioperm and the x86 IN and OUT
// instructions), the kernel's ppdev driver, and /dev/port. It also lists
// the ports the kernel knows of (FindPorts, SystemPorts).
//
// Package lpt keeps the contract (the line table and the interfaces); this
// package keeps what depends on the kernel, so that the contract builds and
// reads the same on every system. On other systems every Open fails with an
// error that says so. Most programs open a port through package
// lpt/backend, which takes a spec string ("ppdev:/dev/parport0").
package linuxlpt
