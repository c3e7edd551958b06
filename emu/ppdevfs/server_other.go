//go:build !linux

package ppdevfs

import (
	"errors"

	"github.com/ttlpapers/ttlpapers/emu"
)

// Server is a mounted directory of ppdev files; there are none here.
type Server struct{}

// Mount needs Linux: ppdev is a Linux interface, and QEMU's parallel
// chardev speaks it only there.
func Mount(dir string, board *emu.Board, opt Options) (*Server, error) {
	return nil, errors.New("ppdevfs: serving ppdev files needs Linux (FUSE and the ppdev ioctls); use the in-process emulator here")
}

// FusermountPath returns "": there is no fusermount here.
func FusermountPath() string { return "" }

func (s *Server) Dir() string        { return "" }
func (s *Server) Path(pe int) string { return "" }
func (s *Server) Stats(pe int) Stats { return Stats{} }
func (s *Server) Unmount() error     { return nil }
