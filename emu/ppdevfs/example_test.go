//go:build linux

package ppdevfs_test

import (
	"fmt"
	"os"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/linuxlpt"
)

// Serve a 2-PE board as ppdev files and drive PE 0 through one of them,
// exactly as a program (or QEMU's parallel chardev) would drive
// /dev/parport0. It needs FUSE (fusermount3), so it is compiled, not run.
func ExampleMount() {
	board, err := emu.New(2)
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "board")
	defer os.RemoveAll(dir)
	srv, err := ppdevfs.Mount(dir, board, ppdevfs.Options{})
	if err != nil {
		fmt.Println(err) // no FUSE here
		return
	}
	defer srv.Unmount()
	port, err := linuxlpt.OpenPPDev(srv.Path(0)) // claims it, like /dev/parport0
	if err != nil {
		fmt.Println(err)
		return
	}
	defer port.Close()
	port.WriteData(lpt.Transparent | lpt.LG)
	fmt.Println("PE 0's LED:", board.LED(0))
}
