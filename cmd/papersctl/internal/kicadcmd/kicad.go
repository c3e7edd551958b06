// Package kicadcmd is papersctl kicad.
package kicadcmd

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/progress"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
)

// Cmd is papersctl kicad.
var Cmd = &base.Command{Name: "kicad", Summary: "generate the board's KiCad files, BOM and wiring lists from the hw netlist",
	Synopsis: "[--out DIR] [--fab] [--json]",
	About: "Writes, for the 4-, 8-, 16- and 32-PE boards and the Raspberry Pi adapter, a KiCad project,\n" +
		"schematic, routed board, netlist, BOMs (ours and JLCPCB's) and wire list, all generated from\n" +
		"the hw netlist, under --out (replacing files of the same names). The schematics embed KiCad's\n" +
		"own symbols, read from the kicad-symbols package's folder (/usr/share/kicad/symbols, or\n" +
		"$KICAD9_SYMBOL_DIR), the boards KiCad's own footprints, read from kicad-footprints'\n" +
		"(/usr/share/kicad/footprints, or $KICAD9_FOOTPRINT_DIR), their pours filled by KiCad 9's zone\n" +
		"filler (its pcbnew Python module, Debian's kicad package). --fab then has KiCad 9's kicad-cli make each board's fabrication outputs in\n" +
		"its fab/ folder: Gerbers with their job file, drill and position files, JLCPCB's placement file,\n" +
		"a fab note and a zip of them with the BOMs. scripts/board-pictures.sh plots the pictures in\n" +
		"docs/ with kicad-cli.",
	New: func() base.Runner { return &kicadCmd{} }}

type kicadCmd struct {
	out  string
	fab  bool
	json bool
}

func (c *kicadCmd) Define(f *base.FlagSet) {
	f.Path(&c.out, "out", "kicad", "dir", false, "directory to write the board files into (created if missing)")
	f.Bool(&c.fab, "fab", "also make the routed boards' fabrication outputs with kicad-cli (KiCad 9)")
	f.Bool(&c.json, "json", "print the files written as JSON")
}

func (c *kicadCmd) Check(*base.FlagSet, []string) error {
	if err := kicad.CheckLibraries(); err != nil {
		return err
	}
	if c.fab {
		if _, err := exec.LookPath("kicad-cli"); err != nil {
			return fmt.Errorf("--fab needs KiCad 9's kicad-cli, not found on PATH: on Debian bookworm add bookworm-backports to apt's sources and apt-get install -t bookworm-backports kicad")
		}
	}
	return nil
}

func (c *kicadCmd) Run(e *base.Env, _ []string) error {
	line := progress.New(e.Stderr)
	start := time.Now()
	show := func(what string) { line.Show("kicad: %s (%v)", what, time.Since(start).Round(time.Second)) }
	paths, err := kicad.Generate(c.out, show) // relative to c.out
	if err == nil && c.fab {
		cli, _ := exec.LookPath("kicad-cli")
		var fab []string
		fab, err = kicad.Fab(cli, c.out, show)
		paths = append(paths, fab...)
	}
	line.Clear()
	if err != nil {
		return err
	}
	for i, p := range paths {
		paths[i] = filepath.Join(c.out, p)
	}
	if c.json {
		return base.WriteJSON(e.Stdout, struct {
			Dir   string   `json:"dir"`
			Files []string `json:"files"`
		}{c.out, paths})
	}
	_, err = fmt.Fprintf(e.Stdout, "wrote %d files under %s\n", len(paths), c.out)
	return err
}
