package kicad

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ttlpapers/ttlpapers/hw"
)

// refLess orders references naturally: U2 before U10, C before D.
func refLess(a, b string) bool {
	pa, na := splitRef(a)
	pb, nb := splitRef(b)
	if pa != pb {
		return pa < pb
	}
	return na < nb
}

func splitRef(r string) (string, int) {
	i := len(strings.TrimRight(r, "0123456789"))
	n, _ := strconv.Atoi(r[i:])
	return r[:i], n
}

func nodeLess(a, b hw.Node) bool {
	if a.Ref != b.Ref {
		return refLess(a.Ref, b.Ref)
	}
	return a.Pin < b.Pin
}

// sortedNodes returns a net's pins in board order.
func sortedNodes(n *hw.Net) []hw.Node {
	nodes := append([]hw.Node(nil), n.Nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodeLess(nodes[i], nodes[j]) })
	return nodes
}

// netlistName is the name KiCad gives a net: label nets carry the sheet
// path "/", power nets are global.
func netlistName(n string) string {
	if n == hw.VCC || n == hw.GND {
		return n
	}
	return "/" + n
}

// Netlist renders the board as a KiCad netlist export (the .net file
// Pcbnew and other tools import), nets sorted by name.
func Netlist(b *hw.Netlist, schematicFile string) []byte {
	w := &writer{}
	w.open("(export (version \"E\")")
	w.open("(design")
	w.line("(source %s)", quote(schematicFile))
	w.line("(tool \"ttlpapers papersctl kicad\")")
	h := newHierarchy(b)
	w.open("(sheet (number \"1\") (name \"/\") (tstamps \"/\")")
	w.line("(title_block (title %s) (company \"ttlpapers\") (rev %s) (date \"\") (source %s) (comment (number \"1\") (value %s)))", quote(b.Name), quote(b.Revision), quote(schematicFile), quote(Notice))
	w.close()
	for _, sh := range h.subSheets() {
		w.open("(sheet (number \"%d\") (name %s) (tstamps %s)", h.page(sh), quote("/"+sh.name+"/"), quote("/"+sh.uuid(b.Name+"/")+"/"))
		w.line("(title_block (title %s) (company \"ttlpapers\") (rev %s) (date \"\") (source %s) (comment (number \"1\") (value %s)))", quote(b.Name), quote(b.Revision), quote(sh.file), quote(Notice))
		w.close()
	}
	w.close()
	w.open("(components")
	comps := append(slices.Clone(b.Components), mountingHoles()...)
	sort.Slice(comps, func(i, j int) bool { return refLess(comps[i].Ref, comps[j].Ref) })
	for _, c := range comps {
		lib, part, _ := strings.Cut(c.Part.Symbol, ":")
		w.open("(comp (ref %s)", quote(c.Ref))
		w.line("(value %s)", quote(c.Part.Name))
		w.line("(footprint %s)", quote(c.Part.Footprint))
		w.line("(libsource (lib %s) (part %s) (description %s))", quote(lib), quote(part), quote(c.Part.Description))
		w.line("(property (name \"Role\") (value %s))", quote(c.Role))
		names, tstamps := "/", "/"
		if sh := h.sheetOf(c.Ref); sh != nil {
			names, tstamps = "/"+sh.name+"/", "/"+sh.uuid(b.Name+"/")+"/"
		}
		w.line("(sheetpath (names %s) (tstamps %s))", quote(names), quote(tstamps))
		w.line("(tstamps %s))", quote(uuid(b.Name+"/"+c.Ref)))
		w.depth--
	}
	w.close()
	w.open("(nets")
	nets := append([]*hw.Net(nil), b.Nets...)
	sort.Slice(nets, func(i, j int) bool { return h.netName(nets[i].Name) < h.netName(nets[j].Name) })
	for i, n := range nets {
		w.open("(net (code \"%d\") (name %s)", i+1, quote(h.netName(n.Name)))
		for _, nd := range sortedNodes(n) {
			pin, _ := b.Component(nd.Ref).Part.PinByNum(nd.Pin)
			w.line("(node (ref %s) (pin \"%d\") (pinfunction %s) (pintype %s))", quote(nd.Ref), nd.Pin, quote(pinName(b.Component(nd.Ref).Part, pin)), quote(kicadPinType(pin.Type)))
		}
		w.close()
	}
	w.close()
	w.close()
	return []byte(w.b.String())
}

// ReadNetlist parses a KiCad netlist export into nets by name (the sheet
// path removed: NetLabel) and components' values and footprints by
// reference.
func ReadNetlist(src []byte) (nets map[string][]Node, comps map[string][2]string, err error) {
	root, err := ParseExpr(string(src))
	if err != nil {
		return nil, nil, err
	}
	if root.Head() != "export" {
		return nil, nil, fmt.Errorf("kicad: not a netlist export (starts with %q)", root.Head())
	}
	comps = map[string][2]string{}
	if cs := root.Child("components"); cs != nil {
		for _, c := range cs.Children("comp") {
			comps[c.Child("ref").Arg(0)] = [2]string{c.Child("value").Arg(0), c.Child("footprint").Arg(0)}
		}
	}
	nets = map[string][]Node{}
	if ns := root.Child("nets"); ns != nil {
		for _, n := range ns.Children("net") {
			name := NetLabel(n.Child("name").Arg(0))
			if _, dup := nets[name]; dup {
				return nil, nil, fmt.Errorf("kicad: net %s listed twice", name)
			}
			for _, nd := range n.Children("node") {
				nets[name] = append(nets[name], Node{nd.Child("ref").Arg(0), nd.Child("pin").Arg(0)})
			}
		}
	}
	return nets, comps, nil
}

// bomRow is one line of a bill of materials: a part and where it goes.
type bomRow struct {
	part *hw.Part
	refs []string
}

// bomRows groups a board's components by part, in reference order.
func bomRows(b *hw.Netlist) []*bomRow {
	rows := map[*hw.Part]*bomRow{}
	var list []*bomRow
	for _, c := range b.Components {
		r := rows[c.Part]
		if r == nil {
			r = &bomRow{part: c.Part}
			rows[c.Part] = r
			list = append(list, r)
		}
		r.refs = append(r.refs, c.Ref)
	}
	for _, r := range list {
		sort.Slice(r.refs, func(i, j int) bool { return refLess(r.refs[i], r.refs[j]) })
	}
	sort.Slice(list, func(i, j int) bool { return refLess(list[i].refs[0], list[j].refs[0]) })
	return list
}

// BOM is the bill of materials as CSV: one row per part, with its
// references, quantity, what to buy and, for a standard part, a maker's
// part number and, where confirmed, JLCPCB's (LCSC's) number for it.
func BOM(b *hw.Netlist) []byte {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write([]string{"Reference", "Value", "Footprint", "Quantity", "Description", "Manufacturer", "MPN", "LCSC"})
	for _, r := range bomRows(b) {
		p := r.part
		cw.Write([]string{strings.Join(r.refs, " "), p.Name, p.Footprint, strconv.Itoa(len(r.refs)), p.Description, p.Maker, p.MPN, p.LCSC})
	}
	cw.Flush()
	return buf.Bytes()
}

// jlcpcbBOMSuffix ends the name of a board's BOM in JLCPCB's format.
const jlcpcbBOMSuffix = "-bom-jlcpcb.csv"

// JLCPCBBOM is the bill of materials in the columns JLCPCB's assembly
// service takes: Comment (the value), Designator (the references, comma
// separated), Footprint (without its library) and JLCPCB Part #, the
// house's own catalogue number: the part's LCSC number where one was found
// for its MPN, else empty for the buyer to choose (the catalogue changes,
// and a through-hole part may be fitted by hand).
func JLCPCBBOM(b *hw.Netlist) []byte {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write([]string{"Comment", "Designator", "Footprint", "JLCPCB Part #"})
	for _, r := range bomRows(b) {
		_, fp, _ := strings.Cut(r.part.Footprint, ":")
		cw.Write([]string{r.part.Name, strings.Join(r.refs, ","), fp, r.part.LCSC})
	}
	cw.Flush()
	return buf.Bytes()
}

// Wires is the point-to-point wiring list as CSV: each net daisy-chained
// through its pins in board order (so no pin carries more than two wires,
// as wire-wrap posts require), the wires sorted by the pin they start at,
// so a builder works round the board chip by chip, pin by pin.
func Wires(b *hw.Netlist) []byte {
	type wire struct {
		from, to hw.Node
		net      string
	}
	var ws []wire
	for _, n := range b.Nets {
		nodes := sortedNodes(n)
		for i := 1; i < len(nodes); i++ {
			ws = append(ws, wire{nodes[i-1], nodes[i], n.Name})
		}
	}
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].from != ws[j].from {
			return nodeLess(ws[i].from, ws[j].from)
		}
		return nodeLess(ws[i].to, ws[j].to)
	})
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write([]string{"Wire", "From", "To", "Net", "From part", "To part"})
	part := func(nd hw.Node) string {
		c := b.Component(nd.Ref)
		pin, _ := c.Part.PinByNum(nd.Pin)
		if name := pinName(c.Part, pin); name != "" && name != "~" {
			return c.Part.Name + " " + name
		}
		return c.Part.Name
	}
	for i, w := range ws {
		cw.Write([]string{strconv.Itoa(i + 1), w.from.String(), w.to.String(), w.net, part(w.from), part(w.to)})
	}
	cw.Flush()
	return buf.Bytes()
}

// Project is the KiCad project file: the sheet, and the design rules the
// router keeps (Rules), so that KiCad's DRC checks the board against them
// and Pcbnew routes to them; KiCad fills in the rest with its defaults.
// KiCad's library checks are on: every footprint is KiCad's library copy,
// found through the project's footprint library table (FootprintTable). The
// rules check's exclusions are the schematic's findings that are right
// (exclude, in schematic.go), each with its reason.
func Project(b *hw.Netlist, base string) ([]byte, error) {
	scs, err := draw(b)
	if err != nil {
		return nil, err
	}
	var exclusions [][2]string
	sheets := [][]string{{uuid(b.Name + "/sheet"), ""}}
	for _, sc := range scs {
		exclusions = append(exclusions, sc.exclusions...)
		if sh := sc.pg.sheet; sh != nil {
			sheets = append(sheets, []string{sh.uuid(sc.key), sh.name})
		}
	}
	mm := func(v int) float64 { return float64(v) / 1000 }
	class := func(name string, track int, priority int) map[string]any {
		return map[string]any{"name": name, "clearance": mm(Rules.Clearance), "track_width": mm(track),
			"via_diameter": mm(Rules.ViaSize), "via_drill": mm(Rules.ViaDrill), "priority": priority,
			"bus_width": 12, "wire_width": 6, "line_style": 0,
			"microvia_diameter": 0.3, "microvia_drill": 0.1, "diff_pair_gap": 0.25, "diff_pair_via_gap": 0.25, "diff_pair_width": 0.2}
	}
	// The supplies' nets are routed PowerTrack wide: their net class says so.
	power := []map[string]string{{"netclass": "Power", "pattern": hw.VCC}, {"netclass": "Power", "pattern": hw.GND}}
	for _, n := range []string{hw.NetPi3V3, hw.NetVIn} {
		if b.Net(n) != nil {
			power = append(power, map[string]string{"netclass": "Power", "pattern": netlistName(n)})
		}
	}
	pro := map[string]any{
		"meta":   map[string]any{"filename": base + ".kicad_pro", "version": 3},
		"sheets": sheets,
		"board": map[string]any{"design_settings": map[string]any{
			"rules": map[string]any{
				"min_clearance":             mm(Rules.Clearance),
				"min_track_width":           mm(Rules.Track),
				"min_via_diameter":          mm(Rules.ViaSize),
				"min_via_annular_width":     mm(Rules.ViaSize-Rules.ViaDrill) / 2,
				"min_through_hole_diameter": mm(Rules.ViaDrill),
				"min_hole_to_hole":          mm(Rules.HoleClearance),
				"min_hole_clearance":        mm(Rules.Clearance),
				"min_copper_edge_clearance": mm(Rules.EdgeClearance),
			},
		}},
		"net_settings": map[string]any{
			"meta":              map[string]any{"version": 4},
			"classes":           []any{class("Default", Rules.Track, 2147483647), class("Power", Rules.PowerTrack, 0)},
			"netclass_patterns": power,
		},
	}
	if len(exclusions) > 0 {
		pro["erc"] = map[string]any{"erc_exclusions": exclusions}
	}
	out, err := json.MarshalIndent(pro, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
