package kicad

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// A point on a sheet, in hundredths of a millimetre; S numbers the sheet
// instance of a hierarchy it is on (0: the root).
type point struct {
	X, Y coord
	S    int
}

// LibPin is a pin of a library symbol as read back from a schematic.
type LibPin struct {
	Num, Name, Type string
	At              point // connection point, symbol coordinates (Y up)
	Angle           int
	Hidden          bool
	// Unit is the unit the pin belongs to (0: every unit), Style its body
	// style (0: both; 2: the De Morgan drawing).
	Unit, Style int
}

// SheetSymbol is a placed symbol read back from a schematic.
type SheetSymbol struct {
	LibID, Ref, Value, Footprint string
	Power                        bool
	At                           point
	Rotation                     int
	Unit, Style                  int // the unit placed, and its body style
}

// Sheet is what ReadSchematic understands of a KiCad schematic: enough to
// recompute its connectivity. ReadSchematicTree reads a hierarchy into one
// Sheet, each sheet's points on their own instance (point.S).
type Sheet struct {
	Lib        map[string][]LibPin
	LibPower   map[string]bool
	Symbols    []SheetSymbol
	Wires      [][2]point
	Labels     map[point][]string
	NoConnects []point
	// HierLabels are the hierarchical labels, Sheets the sheet symbols.
	HierLabels map[point][]string
	Sheets     []SheetRef
	// pins are, by sheet instance, the points of its symbol's pins by
	// name, on the sheet above.
	pins map[int]map[string]point
}

// SheetRef is a sheet symbol: the sheet's name, its file and the pins that
// join its hierarchical labels' nets to the sheet it is on.
type SheetRef struct {
	Name, File string
	Pins       map[string]point
}

// ReadSchematic parses a .kicad_sch file.
func ReadSchematic(src []byte) (*Sheet, error) {
	root, err := ParseExpr(string(src))
	if err != nil {
		return nil, err
	}
	if root.Head() != "kicad_sch" {
		return nil, fmt.Errorf("kicad: not a schematic (starts with %q)", root.Head())
	}
	s := &Sheet{Lib: map[string][]LibPin{}, LibPower: map[string]bool{}, Labels: map[point][]string{},
		HierLabels: map[point][]string{}, pins: map[int]map[string]point{}}
	if lib := root.Child("lib_symbols"); lib != nil {
		if err := s.readLib(lib); err != nil {
			return nil, err
		}
	}
	for _, e := range root.List {
		if err := s.readItem(e); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// maxSheets bounds a hierarchy's sheet instances: a sheet that holds
// itself would be read for ever.
const maxSheets = 1000

// ReadSchematicTree reads a hierarchical schematic: the root sheet src and,
// through open, every sheet below it, each instance of a sheet on its own
// points. A local label of a sheet below the root names its net with the
// sheet's path ("/PE0-7/PE0.LED_G"), as KiCad does.
func ReadSchematicTree(src []byte, open func(file string) ([]byte, error)) (*Sheet, error) {
	root, err := ReadSchematic(src)
	if err != nil {
		return nil, err
	}
	type todo struct {
		ref    SheetRef
		parent int
		path   string
	}
	var queue []todo
	for _, r := range root.Sheets {
		queue = append(queue, todo{r, 0, "/"})
	}
	for n := 1; len(queue) > 0; n++ {
		t := queue[0]
		queue = queue[1:]
		if n > maxSheets {
			return nil, fmt.Errorf("kicad: more than %d sheet instances (does a sheet hold itself?)", maxSheets)
		}
		sub, err := open(t.ref.File)
		if err != nil {
			return nil, fmt.Errorf("kicad: sheet %s: %w", t.ref.Name, err)
		}
		sh, err := ReadSchematic(sub)
		if err != nil {
			return nil, fmt.Errorf("kicad: sheet %s (%s): %w", t.ref.Name, t.ref.File, err)
		}
		pins := map[string]point{}
		for name, at := range t.ref.Pins {
			at.S = t.parent
			pins[name] = at
		}
		root.pins[n] = pins
		path := t.path + t.ref.Name + "/"
		root.merge(sh, n, path)
		for _, r := range sh.Sheets {
			queue = append(queue, todo{r, n, path})
		}
	}
	return root, nil
}

// merge adds the items of sheet instance n, at path, to s.
func (s *Sheet) merge(sh *Sheet, n int, path string) {
	on := func(p point) point { p.S = n; return p }
	for id, pins := range sh.Lib {
		if _, ok := s.Lib[id]; !ok {
			s.Lib[id], s.LibPower[id] = pins, sh.LibPower[id]
		}
	}
	for _, sym := range sh.Symbols {
		sym.At = on(sym.At)
		s.Symbols = append(s.Symbols, sym)
	}
	for _, w := range sh.Wires {
		s.Wires = append(s.Wires, [2]point{on(w[0]), on(w[1])})
	}
	for at, ls := range sh.Labels {
		for _, l := range ls {
			s.Labels[on(at)] = append(s.Labels[on(at)], path+l)
		}
	}
	for at, ls := range sh.HierLabels {
		s.HierLabels[on(at)] = append(s.HierLabels[on(at)], ls...)
	}
	for _, p := range sh.NoConnects {
		s.NoConnects = append(s.NoConnects, on(p))
	}
}

// readLib reads the library symbols' pins.
func (s *Sheet) readLib(lib *Expr) error {
	for _, sym := range lib.Children("symbol") {
		id := sym.Arg(0)
		s.LibPower[id] = sym.Child("power") != nil
		s.Lib[id] = nil // known, even without pins (a mounting hole)
		for _, sub := range sym.Children("symbol") {
			unit, style, err := unitOf(sub.Arg(0))
			if err != nil {
				return err
			}
			for _, p := range sub.Children("pin") {
				at, angle, err := readAt(p)
				if err != nil {
					return err
				}
				s.Lib[id] = append(s.Lib[id], LibPin{
					Num: p.Child("number").Arg(0), Name: p.Child("name").Arg(0), Type: p.Arg(0), At: at, Angle: angle,
					Hidden: hasAtom(p, "hide") || p.Child("hide").Arg(0) == "yes", Unit: unit, Style: style,
				})
			}
		}
	}
	return nil
}

// readItem reads one item of the sheet: a placed symbol, a wire, a label
// or a no-connect flag; anything else is ignored.
func (s *Sheet) readItem(e *Expr) error {
	switch e.Head() {
	case "symbol":
		sym, err := s.readSymbol(e)
		if err != nil {
			return err
		}
		s.Symbols = append(s.Symbols, sym)
	case "wire":
		pts := e.Child("pts").Children("xy")
		if len(pts) != 2 {
			return fmt.Errorf("kicad: wire with %d points", len(pts))
		}
		a, err := readXY(pts[0])
		if err != nil {
			return err
		}
		b, err := readXY(pts[1])
		if err != nil {
			return err
		}
		s.Wires = append(s.Wires, [2]point{a, b})
	case "label", "global_label":
		at, _, err := readAt(e)
		if err != nil {
			return err
		}
		s.Labels[at] = append(s.Labels[at], e.Arg(0))
	case "hierarchical_label":
		at, _, err := readAt(e)
		if err != nil {
			return err
		}
		s.HierLabels[at] = append(s.HierLabels[at], e.Arg(0))
	case "sheet":
		ref := SheetRef{Pins: map[string]point{}}
		for _, p := range e.Children("property") {
			switch p.Arg(0) {
			case "Sheetname", "Sheet name":
				ref.Name = p.Arg(1)
			case "Sheetfile", "Sheet file":
				ref.File = p.Arg(1)
			}
		}
		for _, p := range e.Children("pin") {
			at, _, err := readAt(p)
			if err != nil {
				return err
			}
			if _, dup := ref.Pins[p.Arg(0)]; dup {
				return fmt.Errorf("kicad: sheet %s has two pins %s", ref.Name, p.Arg(0))
			}
			ref.Pins[p.Arg(0)] = at
		}
		if ref.Name == "" || ref.File == "" {
			return fmt.Errorf("kicad: sheet symbol without a name or a file")
		}
		s.Sheets = append(s.Sheets, ref)
	case "no_connect":
		at, _, err := readAt(e)
		if err != nil {
			return err
		}
		s.NoConnects = append(s.NoConnects, at)
	}
	return nil
}

// readSymbol reads a placed symbol, whose library symbol must be read.
func (s *Sheet) readSymbol(e *Expr) (SheetSymbol, error) {
	at, rot, err := readAt(e)
	if err != nil {
		return SheetSymbol{}, err
	}
	sym := SheetSymbol{LibID: e.Child("lib_id").Arg(0), At: at, Rotation: rot, Unit: 1, Style: 1}
	for _, f := range []struct {
		key string
		dst *int
	}{{"unit", &sym.Unit}, {"body_style", &sym.Style}, {"convert", &sym.Style}} {
		if v := e.Child(f.key).Arg(0); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return SheetSymbol{}, fmt.Errorf("kicad: symbol %s %q", f.key, v)
			}
			*f.dst = n
		}
	}
	sym.Power = s.LibPower[sym.LibID]
	if _, ok := s.Lib[sym.LibID]; !ok {
		return SheetSymbol{}, fmt.Errorf("kicad: symbol %q is not in lib_symbols", sym.LibID)
	}
	for _, p := range e.Children("property") {
		switch p.Arg(0) {
		case "Reference":
			sym.Ref = p.Arg(1)
		case "Value":
			sym.Value = p.Arg(1)
		case "Footprint":
			sym.Footprint = p.Arg(1)
		}
	}
	return sym, nil
}

// NetLabel is the label a KiCad net's name ends in: the name without its
// sheet path, "PE0.LED_G" of "/PE0-7/PE0.LED_G", "I0" of "/I0".
func NetLabel(name string) string {
	if strings.HasPrefix(name, "/") {
		return name[strings.LastIndex(name, "/")+1:]
	}
	return name
}

// hasAtom reports whether a list holds the bare word a ("hide").
func hasAtom(e *Expr, a string) bool {
	for _, c := range e.List {
		if !c.IsList && !c.Quoted && c.Atom == a {
			return true
		}
	}
	return false
}

func readXY(e *Expr) (point, error) {
	x, err := mm(e.Arg(0))
	if err != nil {
		return point{}, err
	}
	y, err := mm(e.Arg(1))
	return point{X: x, Y: y}, err
}

func readAt(e *Expr) (point, int, error) {
	at := e.Child("at")
	if at == nil {
		return point{}, 0, fmt.Errorf("kicad: %s without a position", e.Head())
	}
	p, err := readXY(at)
	if err != nil {
		return point{}, 0, err
	}
	angle := 0
	if a := at.Arg(2); a != "" {
		f, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return point{}, 0, fmt.Errorf("kicad: bad angle %q", a)
		}
		angle = int(f)
	}
	return p, angle, nil
}

// Pins are the library pins of the unit and body style a placed symbol
// shows.
func (s *Sheet) Pins(sym SheetSymbol) []LibPin {
	var out []LibPin
	for _, p := range s.Lib[sym.LibID] {
		if (p.Unit == 0 || p.Unit == sym.Unit) && (p.Style == 0 || p.Style == sym.Style) {
			out = append(out, p)
		}
	}
	return out
}

// PinAt is where a symbol's pin connects on the sheet: the library
// position turned by the symbol's rotation (counter-clockwise, as KiCad
// draws it) with the Y axis flipped from library to sheet.
func (sym SheetSymbol) PinAt(p LibPin) point {
	x, y := p.At.X, p.At.Y
	for r := 0; r < sym.Rotation%360; r += 90 {
		x, y = -y, x
	}
	return point{X: sym.At.X + x, Y: sym.At.Y - y, S: sym.At.S}
}

// Node is one pin of one symbol: "U1" pin "6".
type Node struct{ Ref, Pin string }

// Connectivity is the netlist a schematic draws: nets by name (from their
// labels and power symbols; unnamed nets get "?" and a number) and the pins
// on no net.
type Connectivity struct {
	Nets        map[string][]Node
	Unconnected []Node
}

// Connectivity joins pins, wire ends, labels and power symbols that share a
// point, and labels and power symbols that share a name. It reports an
// error when one net carries two names (a short) or a no-connect flag sits
// on a connected pin. Wires join only at their ends (the generator never
// draws T-junctions).
func (s *Sheet) Connectivity() (*Connectivity, error) {
	j := &joins{parent: map[point]point{}, names: map[string]point{}}
	pins := s.join(j)
	if err := s.joinSheets(j); err != nil {
		return nil, err
	}
	rootName, err := j.rootNames()
	if err != nil {
		return nil, err
	}
	members := map[point][]Node{}
	for _, p := range pins {
		r := j.find(p.at)
		members[r] = append(members[r], p.n)
	}
	// A pin alone with nothing else at its point is unconnected.
	touched := map[point]int{}
	for _, w := range s.Wires {
		touched[j.find(w[0])]++
	}
	for at := range s.Labels {
		touched[j.find(at)]++
	}
	for at := range s.HierLabels {
		touched[j.find(at)]++
	}
	nc := map[point]bool{}
	for _, p := range s.NoConnects {
		nc[p] = true
	}
	for _, p := range pins {
		if r := j.find(p.at); nc[p.at] && (len(members[r]) > 1 || touched[r] > 0) {
			return nil, fmt.Errorf("kicad: no-connect flag on %s pin %s, which is on a net", p.n.Ref, p.n.Pin)
		}
	}
	return netsOf(members, rootName, touched), nil
}

// joinSheets joins the hierarchical labels of one name on a sheet instance
// to each other and to the pin of that name on the sheet's symbol. A label
// without its pin, or a pin without its label, is an error: KiCad's rules
// check says so too.
func (s *Sheet) joinSheets(j *joins) error {
	type key struct {
		sheet int
		name  string
	}
	labels := map[key]point{}
	for _, at := range slices.SortedFunc(maps.Keys(s.HierLabels), pointCmp) {
		for _, l := range s.HierLabels[at] {
			k := key{at.S, l}
			if first, ok := labels[k]; ok {
				j.union(at, first)
				continue
			}
			labels[k] = at
			pin, ok := s.pins[at.S][l]
			if !ok {
				return fmt.Errorf("kicad: hierarchical label %s on sheet instance %d has no pin on its sheet's symbol", l, at.S)
			}
			j.union(at, pin)
		}
	}
	for n, pins := range s.pins {
		for name := range pins {
			if _, ok := labels[key{n, name}]; !ok {
				return fmt.Errorf("kicad: sheet pin %s of sheet instance %d has no hierarchical label on its sheet", name, n)
			}
		}
	}
	for _, r := range s.Sheets {
		if len(s.pins) == 0 && len(r.Pins) > 0 {
			return fmt.Errorf("kicad: sheet %s's pins lead to a sheet not read: read the schematic with ReadSchematicTree", r.Name)
		}
	}
	return nil
}

func pointCmp(a, b point) int {
	return cmp.Or(cmp.Compare(a.S, b.S), cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y))
}

// joins is a union-find over the sheet's points, with the net names seen
// and a point of each.
type joins struct {
	parent map[point]point
	names  map[string]point
}

func (j *joins) find(p point) point {
	q, ok := j.parent[p]
	if !ok || q == p {
		j.parent[p] = p
		return p
	}
	r := j.find(q)
	j.parent[p] = r
	return r
}

func (j *joins) union(a, b point) { j.parent[j.find(a)] = j.find(b) }

// name puts point at on the net named n.
func (j *joins) name(n string, at point) {
	if first, ok := j.names[n]; ok {
		j.union(at, first)
	} else {
		j.names[n] = at
		j.find(at)
	}
}

// rootNames names each named net's root point; two names on one net are a
// short.
func (j *joins) rootNames() (map[point]string, error) {
	rootName := map[point]string{}
	for n, at := range j.names {
		r := j.find(at)
		if old, ok := rootName[r]; ok && old != n {
			return nil, fmt.Errorf("kicad: nets %s and %s are shorted together", min(old, n), max(old, n))
		}
		rootName[r] = n
	}
	return rootName, nil
}

type pinAt struct {
	n  Node
	at point
}

// join joins wire ends, labels and power symbols, and returns the parts'
// pins with their points.
func (s *Sheet) join(j *joins) []pinAt {
	for _, w := range s.Wires {
		j.union(w[0], w[1])
	}
	for at, ls := range s.Labels {
		for _, l := range ls {
			j.name(l, at)
		}
	}
	var pins []pinAt
	for _, sym := range s.Symbols {
		for _, p := range s.Pins(sym) {
			at := sym.PinAt(p)
			switch {
			case !sym.Power:
				pins = append(pins, pinAt{Node{sym.Ref, p.Num}, at})
				j.find(at)
			case p.Hidden || p.Type == "power_in":
				// A power input pin (or, before KiCad 9, a hidden one)
				// makes a power symbol a global label (VCC, GND).
				j.name(sym.Value, at)
			default:
				j.find(at) // a visible one (PWR_FLAG) only sits on its net
			}
		}
	}
	return pins
}

// netsOf collects the nets, in the order of their root points; unnamed
// nets get "?" and a number, and a lone untouched pin is unconnected.
func netsOf(members map[point][]Node, rootName map[point]string, touched map[point]int) *Connectivity {
	c := &Connectivity{Nets: map[string][]Node{}}
	roots := slices.SortedFunc(maps.Keys(members), pointCmp)
	unnamed := 0
	for _, r := range roots {
		nodes := members[r]
		n, named := rootName[r]
		if !named && len(nodes) == 1 && touched[r] == 0 {
			c.Unconnected = append(c.Unconnected, nodes[0])
			continue
		}
		if !named {
			unnamed++
			n = fmt.Sprintf("?%d", unnamed)
		}
		c.Nets[n] = append(c.Nets[n], nodes...)
	}
	return c
}
