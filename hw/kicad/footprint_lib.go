package kicad

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ttlpapers/ttlpapers/hw"
)

// EnvFootprintDir names the folder of KiCad's footprint libraries, as
// KiCad 9 itself names it; unset, the generator reads DefaultFootprintDir.
const EnvFootprintDir = "KICAD9_FOOTPRINT_DIR"

// DefaultFootprintDir is where Debian's kicad-footprints package installs
// KiCad's standard footprint libraries.
const DefaultFootprintDir = "/usr/share/kicad/footprints"

// FootprintDir is the folder of KiCad's footprint libraries the generator
// reads: $KICAD9_FOOTPRINT_DIR, or DefaultFootprintDir.
func FootprintDir() string { return envOr(EnvFootprintDir, DefaultFootprintDir) }

// envOr is the environment variable env's value, or def where it is unset
// or empty, as KiCad reads its path variables.
func envOr(env, def string) string {
	if d := os.Getenv(env); d != "" {
		return d
	}
	return def
}

// BoardFootprints are the library names of the footprints the boards use:
// every part's and the mounting hole's.
func BoardFootprints() []string {
	ids := []string{holeFootprint}
	for _, p := range append(slices.Clone(hw.Parts), hw.Passives...) {
		ids = append(ids, p.Footprint)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// footprintPath is the file of a footprint in KiCad's libraries under dir.
func footprintPath(dir, id string) string {
	lib, name, _ := strings.Cut(id, ":")
	return filepath.Join(dir, lib+".pretty", name+".kicad_mod")
}

// footprintError is the error of a footprint file that cannot be read:
// ErrNoLibraries, naming the file and the variable to set, if it is not
// there.
func footprintError(path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w (%s is missing; %s names the footprints' folder)", ErrNoLibraries, path, EnvFootprintDir)
	}
	return err
}

// ReadFootprints reads the footprints named by library name ("Package_DIP:
// DIP-14_W7.62mm") from the libraries in dir, each as its file parses.
func ReadFootprints(dir string, ids []string) (map[string]*Expr, error) {
	out := map[string]*Expr{}
	for _, id := range ids {
		path := footprintPath(dir, id)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, footprintError(path, err)
		}
		fp, err := ParseExpr(string(src))
		if err != nil {
			return nil, fmt.Errorf("kicad: %s: %w", path, err)
		}
		if fp.Head() != "footprint" {
			return nil, fmt.Errorf("kicad: %s is not a footprint (starts with %q)", path, fp.Head())
		}
		out[id] = fp
	}
	return out, nil
}

// checkFootprints reports whether every footprint the boards use is in
// FootprintDir, without reading them.
func checkFootprints() error {
	for _, id := range BoardFootprints() {
		path := footprintPath(FootprintDir(), id)
		if _, err := os.Stat(path); err != nil {
			return footprintError(path, err)
		}
	}
	return nil
}

// installedFootprints are the footprints the boards use, read once from
// FootprintDir.
var installedFootprints = sync.OnceValues(func() (map[string]*Expr, error) {
	return ReadFootprints(FootprintDir(), BoardFootprints())
})

// fpTexts are what a placed footprint writes beyond its library copy: its
// reference where the builder reads it, its value ("": the library's), and
// the pads' nets.
type fpTexts struct {
	ref, value string
	refX, refY um
	rot        int
	uuid       string
	pad        func(num string) string // a pad's net fields, "" for none
}

// writeLibFootprint writes a library footprint placed at (x, y), turned
// rot degrees, as KiCad's Update PCB from Schematic places it: the
// library's items unchanged in the footprint's own coordinates (pads and
// texts turned with it, as KiCad writes them), the reference and value
// texts set, and the pads on their nets. KiCad's DRC compares it with the
// library (lib_footprint_mismatch) and finds them equal.
func writeLibFootprint(w *writer, id string, lib *Expr, x, y um, t fpTexts, head func()) {
	w.open("(footprint %s (layer \"F.Cu\")", quote(id))
	w.line("(tstamp %s)", t.uuid)
	w.line("(at %v %v%s)", x, y, rot(t.rot))
	head()
	for _, e := range lib.List[2:] {
		switch e.Head() {
		case "version", "generator", "generator_version", "layer":
			continue // the library file's own, or written above
		case "property":
			e = placedProperty(e, t)
		case "fp_text":
			e = turned(e, t.rot)
		case "pad":
			e = libPad(e, t)
		}
		writeExpr(w, e)
	}
	w.close()
}

// placedProperty is a library footprint's property as placed: the reference
// and value set (the reference where refAt puts it, upright), the others
// turned with the footprint.
func placedProperty(e *Expr, t fpTexts) *Expr {
	switch e.Arg(0) {
	case "Reference":
		e = withArg(e, 1, t.ref)
		return withChild(e, "at", atom("at"), atom(t.refX.String()), atom(t.refY.String()), atom("0"))
	case "Value":
		if t.value != "" {
			e = withArg(e, 1, t.value)
		}
	}
	return turned(e, t.rot)
}

// libPad is a library pad as placed: turned with the footprint, and on its
// net.
func libPad(e *Expr, t fpTexts) *Expr {
	e = turned(e, t.rot)
	if net := t.pad(e.Arg(0)); net != "" {
		n, err := ParseExpr("(x " + net + ")")
		if err == nil {
			e = &Expr{IsList: true, List: append(slices.Clone(e.List), n.List[1:]...)}
		}
	}
	return e
}

// turned adds the footprint's rotation to an item's (at x y [angle]): KiCad
// writes pads and texts with their angle on the board.
func turned(e *Expr, deg int) *Expr {
	at := e.Child("at")
	if deg == 0 || at == nil {
		return e
	}
	a, _ := strconv.Atoi(at.Arg(2))
	return withChild(e, "at", atom("at"), at.List[1], at.List[2], atom(strconv.Itoa((a+deg)%360)))
}

// withArg is a copy of e with its i-th argument's text replaced.
func withArg(e *Expr, i int, s string) *Expr {
	out := &Expr{IsList: true, List: slices.Clone(e.List)}
	a := *out.List[i+1]
	a.Atom = s
	out.List[i+1] = &a
	return out
}

// withChild is a copy of e with its first sub-list headed head replaced by
// the list of items.
func withChild(e *Expr, head string, items ...*Expr) *Expr {
	out := &Expr{IsList: true, List: slices.Clone(e.List)}
	for i, c := range out.List {
		if c.Head() == head {
			out.List[i] = &Expr{IsList: true, List: items}
			break
		}
	}
	return out
}

func atom(s string) *Expr { return &Expr{Atom: s} }

// fpReference is a board footprint's reference: its Reference property
// (KiCad 9's footprints) or its reference text (KiCad 6's).
func fpReference(fp *Expr) string {
	for _, p := range fp.Children("property") {
		if p.Arg(0) == "Reference" {
			return p.Arg(1)
		}
	}
	for _, t := range fp.Children("fp_text") {
		if t.Arg(0) == "reference" {
			return t.Arg(1)
		}
	}
	return ""
}

// FootprintTable is a board project's footprint library table: each
// library the boards use, at KiCad's own footprint folder, so that KiCad's
// DRC finds the library copy of every footprint whatever the user's global
// table holds.
func FootprintTable() []byte {
	w := &writer{}
	w.open("(fp_lib_table")
	w.line("(version 7)")
	var libs []string
	for _, id := range BoardFootprints() {
		lib, _, _ := strings.Cut(id, ":")
		libs = append(libs, lib)
	}
	for _, lib := range slices.Compact(libs) {
		w.line("(lib (name %s) (type \"KiCad\") (uri %s) (options \"\") (descr \"\"))", quote(lib), quote("${"+EnvFootprintDir+"}/"+lib+".pretty"))
	}
	w.close()
	return []byte(w.b.String())
}

// DesignRules is a board project's custom rules (.kicad_dru): KiCad's
// library draws an edge connector's housing over the board's edge, where
// it overhangs, and its DRC reports that silkscreen as clipped by the
// edge; the rule lets that pass for those connectors' own outlines, and
// nothing else.
func DesignRules(b *hw.Netlist) []byte {
	var refs []string
	for _, c := range b.Components {
		if fp := footprintDefs[c.Part.Footprint]; fp != nil && fp.Edge != 0 {
			refs = append(refs, fmt.Sprintf("B.memberOfFootprint('%s')", c.Ref))
		}
	}
	w := &writer{}
	w.line("(version 1)")
	if len(refs) > 0 {
		slices.SortFunc(refs, func(a, b string) int { return strings.Compare(a, b) })
		w.open("(rule \"edge connector housing over the board edge\"")
		w.line("(constraint silk_clearance)")
		w.line("(condition %s)", quote("A.Layer == 'Edge.Cuts' && B.Layer == 'F.Silkscreen' && ("+strings.Join(refs, " || ")+")"))
		w.line("(severity ignore)")
		w.close()
	}
	return []byte(w.b.String())
}
