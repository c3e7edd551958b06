package kicad

import (
	"os"
	"strings"
	"testing"
)

// seedFiles adds a small file with the heads of each kind of list in the
// committed 4-PE board's file (the whole file makes each run take
// milliseconds), and small hand-written cases.
func seedFiles(f *testing.F, ext string) {
	f.Helper()
	src, err := os.ReadFile("../../kicad/ttl_papers_4pe/ttl_papers_4pe." + ext)
	if err != nil {
		f.Fatal(err)
	}
	root, err := ParseExpr(string(src))
	if err != nil {
		f.Fatal(err)
	}
	// One list of each kind the file's top level has, the library's first
	// symbol with its pins.
	small := &Expr{IsList: true, List: root.List[:1]}
	seen := map[string]bool{}
	for _, c := range root.List[1:] {
		if !seen[c.Head()] {
			seen[c.Head()] = true
			small.List = append(small.List, cut(c, 3))
		}
	}
	f.Add(render(small))
	for _, s := range []string{"(a)", `(a "b\"c\\d\n" (e 1.27 -2.54))`, "()", "(a (b", `"x`, "(a) b", "", "(kicad_sch (symbol (pin input line (at 1 2 90))))", "(kicad_pcb (net 1 x) (footprint (pad 1 (net 1 x))))"} {
		f.Add(s)
	}
}

// cut keeps the first n items of every list in e.
func cut(e *Expr, n int) *Expr {
	if !e.IsList {
		return e
	}
	c := &Expr{IsList: true}
	for i, x := range e.List {
		if i == n+1 { // the head and n items
			break
		}
		c.List = append(c.List, cut(x, n))
	}
	return c
}

// render writes e back as KiCad text.
func render(e *Expr) string {
	switch {
	case e.IsList:
		var parts []string
		for _, c := range e.List {
			parts = append(parts, render(c))
		}
		return "(" + strings.Join(parts, " ") + ")"
	case e.Quoted:
		return quote(e.Atom)
	}
	return e.Atom
}

func equal(a, b *Expr) bool {
	if a.IsList != b.IsList || a.Atom != b.Atom || a.Quoted != b.Quoted || len(a.List) != len(b.List) {
		return false
	}
	for i := range a.List {
		if !equal(a.List[i], b.List[i]) {
			return false
		}
	}
	return true
}

// FuzzParseExpr: the S-expression reader never panics, and what it reads
// it reads again the same after writing it back.
func FuzzParseExpr(f *testing.F) {
	seedFiles(f, "kicad_sch")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseExpr(s)
		if err != nil {
			return
		}
		back, err := ParseExpr(render(e))
		if err != nil || !equal(e, back) {
			t.Fatalf("ParseExpr(%q) then render: %q, %v", s, render(e), err)
		}
	})
}

// FuzzReadSchematic: reading any text as a schematic, and its
// connectivity, returns an error or a sheet, never a panic.
func FuzzReadSchematic(f *testing.F) {
	seedFiles(f, "kicad_sch")
	f.Fuzz(func(t *testing.T, s string) {
		if sh, err := ReadSchematic([]byte(s)); err == nil {
			sh.Connectivity()
		}
	})
}

// FuzzReadPCB: reading any text as a board returns an error or the nets,
// never a panic.
func FuzzReadPCB(f *testing.F) {
	seedFiles(f, "kicad_pcb")
	f.Fuzz(func(t *testing.T, s string) {
		ReadPCB([]byte(s))
	})
}
