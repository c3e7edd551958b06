package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
)

func init() {
	register(&command{name: "kicad", summary: "generate the board's KiCad files, BOM and wiring lists from the hw netlist", run: runKicad})
}

func runKicad(args []string) int {
	fs := flag.NewFlagSet("kicad", flag.ContinueOnError)
	out := fs.String("out", "kicad", "directory to write the board files into")
	svg := fs.String("svg", filepath.Join("docs", "schematic-4pe.svg"), "where to write the picture of the 4-PE schematic (empty: none)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: papersctl kicad [-out dir] [-svg file]\n\nWrites, for the 4-, 8-, 16- and 32-PE boards, a KiCad 6 project and schematic,\nnetlist, BOM and wire list, all generated from the hw netlist.\n\n")
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
	if *svg != "" {
		b := hw.MustNew(4)
		pic, err := kicad.SVG(kicad.Schematic(b))
		if err == nil {
			err = os.WriteFile(*svg, pic, 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "papersctl kicad: picture: %v\n", err)
			return 1
		}
		paths = append(paths, *svg)
	}
	fmt.Printf("wrote %d files under %s\n", len(paths), *out)
	return 0
}
