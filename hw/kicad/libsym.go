package kicad

import (
	"embed"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
)

// symbols/ holds the symbols the boards use, each copied unchanged from
// KiCad 9's standard library of the file's name (a test compares them with
// the installed libraries): the schematic embeds them as KiCad itself would,
// so KiCad finds each identical to its library's and "Update symbols from
// library" changes nothing.
//
//go:embed symbols/*.kicad_sym
var libFiles embed.FS

// LibraryFiles are the copied libraries' names in symbols/, by library
// nickname ("74xx" → its file's text).
func LibraryFiles() map[string][]byte {
	out := map[string][]byte{}
	entries, _ := libFiles.ReadDir("symbols")
	for _, e := range entries {
		src, _ := libFiles.ReadFile(path.Join("symbols", e.Name()))
		out[strings.TrimSuffix(e.Name(), ".kicad_sym")] = src
	}
	return out
}

// Library is symbol libraries' symbols by lib_id ("74xx:74LS20"), as
// parsed.
type Library map[string]*Expr

// ParseLibrary reads symbol libraries, their text by nickname ("74xx").
func ParseLibrary(files map[string][]byte) (Library, error) {
	out := Library{}
	for lib, src := range files {
		root, err := ParseExpr(string(src))
		if err != nil {
			return nil, fmt.Errorf("kicad: %s.kicad_sym: %w", lib, err)
		}
		for _, s := range root.Children("symbol") {
			out[lib+":"+s.Arg(0)] = s
		}
	}
	return out, nil
}

// copied are the symbols of symbols/.
var copied = sync.OnceValues(func() (Library, error) { return ParseLibrary(LibraryFiles()) })

// LibSymbol is a copied library symbol as a schematic embeds it.
func LibSymbol(libID string) (*Expr, error) {
	lib, err := copied()
	if err != nil {
		return nil, err
	}
	return lib.Embedded(libID)
}

// Embedded is a library symbol as a schematic embeds it: named by its
// lib_id, and flattened (a symbol that extends another is the other's
// drawing with its own properties), as KiCad's Flatten does.
func (raw Library) Embedded(libID string) (*Expr, error) {
	sym := raw[libID]
	if sym == nil {
		return nil, fmt.Errorf("kicad: no symbol %s among the copied KiCad libraries (hw/kicad/symbols): copy it with `go test ./hw/kicad -run TestCopiedSymbolsAreKiCads -update-symbols`", libID)
	}
	lib, name, _ := strings.Cut(libID, ":")
	body := sym
	if ext := sym.Child("extends"); ext != nil {
		if body = raw[lib+":"+ext.Arg(0)]; body == nil {
			return nil, fmt.Errorf("kicad: %s extends %s, which is not copied", libID, ext.Arg(0))
		}
	}
	own := map[string]*Expr{}
	for _, p := range sym.Children("property") {
		own[p.Arg(0)] = p
	}
	parent := body.Arg(0)
	out := &Expr{IsList: true, List: []*Expr{body.List[0], {Atom: libID, Quoted: true}}}
	for _, e := range body.List[2:] {
		switch e.Head() {
		case "property":
			if p := own[e.Arg(0)]; p != nil {
				e = p
			}
		case "symbol": // a unit: KiCad names it after the symbol
			u := *e
			u.List = append([]*Expr{e.List[0], {Atom: name + strings.TrimPrefix(e.Arg(0), parent), Quoted: true}}, e.List[2:]...)
			e = &u
		}
		out.List = append(out.List, e)
	}
	return out, nil
}

// writeExpr writes e as KiCad does: a list of atoms on one line, any other
// list with its leading atoms on its first line, each further item on its
// own line below, and its closing parenthesis on a line of its own.
func writeExpr(w *writer, e *Expr) {
	atom := func(a *Expr) string {
		if a.Quoted {
			return quote(a.Atom)
		}
		return a.Atom
	}
	i, head := 0, []string{}
	for ; i < len(e.List) && !e.List[i].IsList; i++ {
		head = append(head, atom(e.List[i]))
	}
	if i == len(e.List) {
		w.line("(%s)", strings.Join(head, " "))
		return
	}
	w.open("(%s", strings.Join(head, " "))
	for _, c := range e.List[i:] {
		if c.IsList {
			writeExpr(w, c)
		} else {
			w.line("%s", atom(c))
		}
	}
	w.close()
}

// unitOf splits a unit sub-symbol's name "74LS20_2_1" into its unit (0:
// common to all units) and body style (0: common to both, 2: De Morgan).
func unitOf(name string) (unit, style int, err error) {
	parts := strings.Split(name, "_")
	if len(parts) >= 3 {
		unit, err = strconv.Atoi(parts[len(parts)-2])
		if err == nil {
			style, err = strconv.Atoi(parts[len(parts)-1])
		}
	}
	if len(parts) < 3 || err != nil {
		return 0, 0, fmt.Errorf("kicad: unit name %q is not NAME_unit_style", name)
	}
	return unit, style, nil
}

// libProperty is the value of a library symbol's property.
func libProperty(sym *Expr, name string) string {
	for _, p := range sym.Children("property") {
		if p.Arg(0) == name {
			return p.Arg(1)
		}
	}
	return ""
}
