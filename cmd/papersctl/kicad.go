package main

import (
	"fmt"
	"path/filepath"

	"github.com/ttlpapers/ttlpapers/hw/kicad"
)

func init() {
	register(&command{name: "kicad", summary: "generate the board's KiCad files, BOM and wiring lists from the hw netlist",
		synopsis: "[--out DIR] [--json]",
		about: "Writes, for the 4-, 8-, 16- and 32-PE boards, a KiCad 6 project and schematic, netlist, BOM\n" +
			"and wire list, all generated from the hw netlist, under --out (replacing files of the same\n" +
			"names). scripts/kicad-render.sh then plots docs/schematic-4pe.svg with KiCad.",
		new: func() runner { return &kicadCmd{} }})
}

type kicadCmd struct {
	out  string
	json bool
}

func (c *kicadCmd) define(f *flagSet) {
	f.Path(&c.out, "out", "kicad", "dir", false, "directory to write the board files into (created if missing)")
	f.Bool(&c.json, "json", "print the files written as JSON")
}

func (c *kicadCmd) check(*flagSet, []string) error { return nil }

func (c *kicadCmd) run(e *env, _ []string) error {
	paths, err := kicad.Generate(c.out) // relative to c.out
	if err != nil {
		return err
	}
	for i, p := range paths {
		paths[i] = filepath.Join(c.out, p)
	}
	if c.json {
		return writeJSON(e.stdout, struct {
			Dir   string   `json:"dir"`
			Files []string `json:"files"`
		}{c.out, paths})
	}
	_, err = fmt.Fprintf(e.stdout, "wrote %d files under %s\n", len(paths), c.out)
	return err
}
