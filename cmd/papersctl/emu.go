package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/internal/stop"
)

func init() {
	register(&command{name: "emu", summary: "serve an emulated board to other programs (emu serve --fuse DIR)", run: runEmu})
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return fmt.Sprint(*s) }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runEmu(args []string) (status int) {
	if len(args) == 0 || args[0] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: papersctl emu serve --fuse DIR [--pes N] [--inject FAULT ...]")
		return 2
	}
	fl := flag.NewFlagSet("emu serve", flag.ContinueOnError)
	dir := fl.String("fuse", "", "directory to mount the board's ppdev files on (DIR/parport0 ... parport<N-1>; created if missing)")
	pes := fl.Int("pes", 4, "PEs on the board (1 to 32)")
	var faults faultList
	fl.Var(&faults, "inject", "fault to inject, e.g. PE2.D6=stuck0 or PE1=unplugged (repeatable)")
	debug := fl.Bool("debug", false, "log every FUSE request")
	vcdPath := fl.String("vcd", "", "record every port operation in this VCD file (GTKWave), one time step each")
	fl.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: papersctl emu serve --fuse DIR [--pes N] [--inject FAULT ...]\n\n"+
			"Serves one emulated board as Linux ppdev files until interrupted. Point QEMU at them with\n"+
			"  -chardev parallel,id=p,path=DIR/parport<k> -device isa-parallel,chardev=p\n"+
			"so that a guest's port 0x378 is PE k's port.\n\nflags:")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args[1:]); err != nil {
		return 2
	}
	if *dir == "" || fl.NArg() != 0 {
		fl.Usage()
		return 2
	}
	board, err := emu.New(*pes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "papersctl emu serve:", err)
		return 2
	}
	for _, f := range faults {
		if err := board.Inject(f); err != nil {
			fmt.Fprintln(os.Stderr, "papersctl emu serve:", err)
			return 2
		}
	}
	created := false
	if _, err := os.Stat(*dir); os.IsNotExist(err) {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "papersctl emu serve:", err)
			return 1
		}
		created = true
	}
	opt := ppdevfs.Options{PEs: *pes, Debug: *debug}
	if *vcdPath != "" {
		out := openVCD("emu serve", *vcdPath)
		if out == nil {
			return 2
		}
		defer func() { status = max(status, report(out.close("emu serve"))) }()
		opt.Wrap = out.attach(board)
	}
	srv, err := ppdevfs.Mount(*dir, board, opt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "papersctl emu serve:", err)
		if created {
			os.Remove(*dir)
		}
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, stop.Signals...)
	for k := 0; k < *pes; k++ {
		fmt.Printf("PE %d: %s\n", k, srv.Path(k))
	}
	fmt.Printf("serving a %d-PE board (faults: %v); interrupt to stop\n", *pes, faults)
	s := <-sig
	signal.Stop(sig)
	if err := srv.Unmount(); err != nil {
		fmt.Fprintln(os.Stderr, "papersctl emu serve:", err)
		status = 1
	}
	if created {
		os.Remove(*dir)
	}
	for k := 0; k < *pes; k++ {
		st := srv.Stats(k)
		fmt.Printf("PE %d: %d port operations (%d unsupported)\n", k, st.Ioctls, st.Unknown)
	}
	fmt.Printf("stopped on %v\n", s)
	return status
}
