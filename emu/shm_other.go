//go:build !linux

package emu

import "errors"

var errNoShared = errors.New("emu: shared boards need Linux (futexes on a shared mapping)")

// CreateShared is available on Linux only.
func CreateShared(path string, pes int) (*Board, error) { return nil, errNoShared }

// OpenShared is available on Linux only.
func OpenShared(path string) (*Board, error) { return nil, errNoShared }

// Close does nothing: without shared boards every board is in-process.
func (b *Board) Close() error { return nil }

// Owner returns this process's pid: every board is in-process here.
func (b *Board) Owner() int { return int(b.st[hOwner]) }

var alive = func(pid int) bool { return true }

// Shared boards do not exist here, so the cross-process lock is never taken.
func (s state) xlock(i int, me uint32) bool { return false }
func (s state) xunlock(i int)               {}
