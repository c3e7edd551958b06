package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

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

func runEmu(args []string) int {
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
	srv, err := ppdevfs.Mount(*dir, board, ppdevfs.Options{PEs: *pes, Debug: *debug})
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
	s := showPanel(sig, board, *pes)
	signal.Stop(sig)
	status := 0
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

// showPanel prints the board's front panel — every PE's LED, as the seed's
// software sets it — whenever it changes (sampled every 100 ms, as an eye
// would), until a signal comes, and returns the signal.
func showPanel(sig <-chan os.Signal, board *emu.Board, pes int) os.Signal {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		if p := frontPanel(board, pes); p != last {
			fmt.Println("front panel:", p)
			last = p
		}
		select {
		case s := <-sig:
			return s
		case <-tick.C:
		}
	}
}

// frontPanel names every PE's LED colour: "PE 0 green, PE 1 red, …".
func frontPanel(board *emu.Board, pes int) string {
	leds := make([]string, pes)
	for k := range leds {
		leds[k] = fmt.Sprintf("PE %d %v", k, board.LED(k))
	}
	return strings.Join(leds, ", ")
}
