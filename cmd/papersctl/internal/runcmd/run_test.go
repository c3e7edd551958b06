package runcmd

import (
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/launch"
)

// FuzzBoardName: a --board name the command line accepts never leads out
// of the board directory, and makes a file name the board accepts (the
// "papers-" prefix counts towards its length).
func FuzzBoardName(f *testing.F) {
	for _, s := range []string{"job1", "../../escape", "a/b", ".", "..", "", "-x", "x.y_z-1", strings.Repeat("a", 57), strings.Repeat("a", 58), strings.Repeat("a", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkBoardName(s) != nil {
			return
		}
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00") || strings.HasPrefix(s, "-") || len(launch.BoardPrefix+s) > emu.MaxNameLen {
			t.Fatalf("board name %q accepted", s)
		}
		if err := emu.CheckName(launch.BoardPrefix + s); err != nil {
			t.Fatalf("board name %q accepted, but its file name is not: %v", s, err)
		}
	})
}
