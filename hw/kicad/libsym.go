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

// EnvSymbolDir names the folder of KiCad's symbol libraries, as KiCad 9
// itself names it; unset, the generator reads DefaultSymbolDir.
const EnvSymbolDir = "KICAD9_SYMBOL_DIR"

// DefaultSymbolDir is where Debian's kicad-symbols package installs KiCad's
// standard symbol libraries.
const DefaultSymbolDir = "/usr/share/kicad/symbols"

// SymbolDir is the folder of KiCad's symbol libraries the generator reads:
// $KICAD9_SYMBOL_DIR, or DefaultSymbolDir.
func SymbolDir() string { return envOr(EnvSymbolDir, DefaultSymbolDir) }

// ErrNoLibraries is returned, wrapped with the file it missed, when
// KiCad's symbol libraries are not installed: the schematic embeds their
// symbols, and the board names the pins they leave unconnected by them.
var ErrNoLibraries = errors.New("kicad: KiCad 9's symbol and footprint libraries are not installed: on Debian bookworm apt-get install -t bookworm-backports kicad-symbols kicad-footprints, or set " + EnvSymbolDir + " and " + EnvFootprintDir + " to their folders")

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

// ReadLibrary reads the symbols named by lib_id from the libraries in dir,
// and those they extend. It parses only their text, found as KiCad 9
// writes a library (a symbol from a line "\t(symbol \"NAME\"" to a line
// "\t)"): the whole of the five libraries is 15 MB.
func ReadLibrary(dir string, libIDs []string) (Library, error) {
	byLib := map[string][]string{}
	for _, id := range libIDs {
		lib, name, _ := strings.Cut(id, ":")
		byLib[lib] = append(byLib[lib], name)
	}
	out := Library{}
	for lib, names := range byLib {
		path := filepath.Join(dir, lib+".kicad_sym")
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, libraryError(path, err)
		}
		for len(names) > 0 {
			name := names[0]
			names = names[1:]
			if out[lib+":"+name] != nil {
				continue
			}
			text := symbolText(string(src), name)
			if text == "" {
				return nil, fmt.Errorf("kicad: %s has no symbol %s: KiCad 9's kicad-symbols is needed (an older one names its symbols otherwise)", path, name)
			}
			sym, err := ParseExpr(text)
			if err != nil {
				return nil, fmt.Errorf("kicad: %s, symbol %s: %w", path, name, err)
			}
			out[lib+":"+name] = sym
			if e := sym.Child("extends"); e != nil {
				names = append(names, e.Arg(0))
			}
		}
	}
	return out, nil
}

// libraryError is the error of a library file that cannot be read:
// ErrNoLibraries if it is not there.
func libraryError(path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w (%s is missing)", ErrNoLibraries, path)
	}
	return err
}

// CheckLibraries reports whether every symbol library and footprint the
// boards use is in SymbolDir and FootprintDir, without reading them:
// ErrNoLibraries, wrapped, if not.
func CheckLibraries() error {
	for _, id := range BoardSymbols() {
		lib, _, _ := strings.Cut(id, ":")
		path := filepath.Join(SymbolDir(), lib+".kicad_sym")
		if _, err := os.Stat(path); err != nil {
			return libraryError(path, err)
		}
	}
	return checkFootprints()
}

// symbolText is a top-level symbol of a KiCad 9 library file, as its text.
func symbolText(lib, name string) string {
	open := "\n\t(symbol " + strconv.Quote(name) + "\n"
	i := strings.Index(lib, open)
	if i < 0 {
		return ""
	}
	n := strings.Index(lib[i:], "\n\t)\n")
	if n < 0 {
		return ""
	}
	return lib[i+1 : i+n+3]
}

// BoardSymbols are the lib_ids of the symbols the boards use: every part's,
// the power symbols' and the mounting holes'.
func BoardSymbols() []string {
	ids := []string{"power:GND", "power:VCC", "power:PWR_FLAG", holePart.Symbol}
	for _, p := range append(slices.Clone(hw.Parts), hw.Passives...) {
		ids = append(ids, p.Symbol)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// installed are the symbols the boards use, read once from SymbolDir.
var installed = sync.OnceValues(func() (Library, error) { return ReadLibrary(SymbolDir(), BoardSymbols()) })

// LibSymbol is an installed library symbol as a schematic embeds it.
func LibSymbol(libID string) (*Expr, error) {
	lib, err := installed()
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
		return nil, fmt.Errorf("kicad: no symbol %s among those read from KiCad's libraries (add the part to hw.Parts or hw.Passives)", libID)
	}
	lib, name, _ := strings.Cut(libID, ":")
	body := sym
	if ext := sym.Child("extends"); ext != nil {
		if body = raw[lib+":"+ext.Arg(0)]; body == nil {
			return nil, fmt.Errorf("kicad: %s extends %s, which was not read", libID, ext.Arg(0))
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
