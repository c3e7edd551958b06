package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ttlpapers/ttlpapers/hw/kicad"
)

func init() {
	register(&command{name: "kicad", summary: "generate the board's KiCad files, BOM and wiring lists from the hw netlist", run: runKicad})
}

func runKicad(args []string) int {
	fs := flag.NewFlagSet("kicad", flag.ContinueOnError)
	out := fs.String("out", "kicad", "directory to write the board files into")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: papersctl kicad [-out dir]\n\nWrites, for the 4-, 8-, 16- and 32-PE boards, a KiCad 6 project and schematic,\nnetlist, BOM and wire list, all generated from the hw netlist.\nscripts/kicad-render.sh then plots docs/schematic-4pe.svg with KiCad.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	paths, err := kicad.Generate(*out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "papersctl kicad: %v\n", err)
		return 1
	}
	fmt.Printf("wrote %d files under %s\n", len(paths), *out)
	return 0
}
