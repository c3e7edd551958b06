//go:build !linux

package emu

import (
	"errors"
	"fmt"
)

var errNoShared = errors.New("emu: shared boards need Linux (futexes on a shared mapping); run the PEs in one process with package emulate")

// CreateShared is available on Linux only.
func CreateShared(path string, pes int, opts ...Option) (*Board, error) { return nil, errNoShared }

// OpenShared is available on Linux only.
func OpenShared(path string) (*Board, error) { return nil, errNoShared }

// InspectShared is available on Linux only.
func InspectShared(path string) (SharedInfo, error) { return SharedInfo{}, errNoShared }

// RemoveStale removes nothing: there are no shared boards here.
func RemoveStale(path string) bool { return false }

// SharedInfo is what a board file says about its run (Linux only).
type SharedInfo struct {
	Path    string
	UID     int
	Creator int
	Job     uint64
	PEs     int
	Size    int
	Holders []int
	Alive   []bool
	// CreatorAlive reports whether the creator is alive.
	CreatorAlive bool
}

// Live reports whether the board's run is still going.
func (i SharedInfo) Live() bool { return false }

// Users describes the run using the board.
func (i SharedInfo) Users() string { return fmt.Sprintf("job %016x", i.Job) }

// Close does nothing: without shared boards every board is in-process.
func (b *Board) Close() error {
	b.file = boardFile{}
	return nil
}

// Owner returns this process's pid: every board is in-process here.
func (b *Board) Owner() int { return wordPID(b.m.load(hCreator)) }

// Stopped reports false: process states are read on Linux only.
func Stopped(pid int) bool { return false }

var alive = func(w uint64) bool { return true }

func startTime(pid int) uint64 { return 0 }

func (b *Board) checkFile() {}

// boardFile is empty: boards have no files here.
type boardFile struct{}
