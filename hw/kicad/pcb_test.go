package kicad_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// footprintRefs is every component's footprint by reference, from hw.
func footprintRefs(b *hw.Netlist) map[string]string {
	out := map[string]string{}
	for _, c := range b.Components {
		out[c.Ref] = c.Part.Footprint
	}
	return out
}

func sameFootprints(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d footprints, the hw netlist has %d components", what, len(got), len(want))
	}
	for ref, fp := range want {
		if got[ref] != fp {
			t.Errorf("%s: %s has footprint %q, want %q", what, ref, got[ref], fp)
		}
	}
}

// TestPCBIsTheNetlist reads each board file back and checks that every hw
// component has its footprint and every pad sits on its hw net.
func TestPCBIsTheNetlist(t *testing.T) {
	for _, b := range allBoards(t) {
		base := kicad.BaseOf(b)
		nets, fps, err := kicad.ReadPCB(boardFile(t, base))
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		sameFootprints(t, base+".kicad_pcb", fps, footprintRefs(b))
		sameNets(t, base+".kicad_pcb", nets, hwNets(b))
	}
}

// TestPCBReaderFindsMistakes moves one pad to another net: the reader must
// see it, or the test above proves nothing.
func TestPCBReaderFindsMistakes(t *testing.T) {
	b := hw.MustNew(4)
	src := string(boardFile(t, kicad.Base(4)))
	// A DIP's pin 1 (a rounded square), written as KiCad's library has it,
	// one field a line, and its net.
	m := regexp.MustCompile(`\(pad "1" thru_hole roundrect\n(?:\s+\(.*\)\n)*?\s+\(net (\d+ "[^"]*")\)`).FindStringSubmatchIndex(src)
	if m == nil {
		t.Fatal("no DIP pin 1 on a net in the board file")
	}
	bad := src[:m[2]] + `1 "/SOMETHING_ELSE"` + src[m[3]:]
	nets, _, err := kicad.ReadPCB([]byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	for name, nodes := range hwNets(b) {
		if fmt.Sprint(sortNodes(nets[name])) != fmt.Sprint(sortNodes(nodes)) {
			changed++
		}
	}
	if changed != 1 || len(nets["SOMETHING_ELSE"]) != 1 {
		t.Errorf("moving one pad to a new net changed %d hw nets and put %v on the new one, want 1 and one pad", changed, nets["SOMETHING_ELSE"])
	}
}

// libPads reads the pads of a footprint: number, shape, position, size
// and drill, one string each, in file order.
func libPads(fp *kicad.Expr) []string {
	var out []string
	for _, p := range fp.Children("pad") {
		at, size := p.Child("at"), p.Child("size")
		out = append(out, fmt.Sprintf("%s %s %s at (%s %s) size %sx%s drill %s",
			p.Arg(0), p.Arg(1), p.Arg(2), at.Arg(0), at.Arg(1), size.Arg(0), size.Arg(1), p.Child("drill").Arg(0)))
	}
	return out
}

// TestFootprintPadsMatchKiCadLibrary compares the pads the generator puts
// in each footprint with KiCad's own library footprint of that name.
func TestFootprintPadsMatchKiCadLibrary(t *testing.T) {
	eachLibraryFootprint(t, "pads", func(id string, fp, want *kicad.Expr) {
		if g, w := strings.Join(libPads(fp), "\n"), strings.Join(libPads(want), "\n"); g != w {
			t.Errorf("%s: pads differ from KiCad's library.\ngot:\n%s\nwant:\n%s", id, g, w)
		}
	})
}

// eachLibraryFootprint calls check with each footprint the boards use (the
// first placed) and KiCad's library footprint of its name.
func eachLibraryFootprint(t *testing.T, what string, check func(id string, fp, lib *kicad.Expr)) {
	t.Helper()
	const dir = "/usr/share/kicad/footprints"
	if _, err := os.Stat(dir); err != nil {
		testenv.Missing(t, "%s not found: install Debian's kicad-footprints package (apt-get install -y kicad-footprints) to check footprint %s", dir, what)
	}
	seen := map[string]bool{}
	for _, b := range allBoards(t) {
		root, err := kicad.ParseExpr(string(boardFile(t, kicad.BaseOf(b))))
		if err != nil {
			t.Fatal(err)
		}
		for _, fp := range root.Children("footprint") {
			id := fp.Arg(0)
			if seen[id] {
				continue
			}
			seen[id] = true
			lib, name, _ := strings.Cut(id, ":")
			src, err := os.ReadFile(filepath.Join(dir, lib+".pretty", name+".kicad_mod"))
			if err != nil {
				t.Errorf("%s: %v", id, err)
				continue
			}
			want, err := kicad.ParseExpr(string(src))
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			check(id, fp, want)
		}
	}
	if len(seen) == 0 {
		t.Fatal("no footprints in the generated boards")
	}
}

// libSilk reads a footprint's front silkscreen drawings (not its texts),
// one string each, whatever the file's version writes for the line width.
func libSilk(fp *kicad.Expr) []string {
	var out []string
	for _, g := range fp.List {
		if !strings.HasPrefix(g.Head(), "fp_") || g.Head() == "fp_text" || g.Child("layer") == nil || g.Child("layer").Arg(0) != "F.SilkS" {
			continue
		}
		s := g.Head()
		for _, part := range []string{"start", "mid", "end", "center"} {
			if c := g.Child(part); c != nil {
				s += fmt.Sprintf(" %s %s %s", part, c.Arg(0), c.Arg(1))
			}
		}
		if pts := g.Child("pts"); pts != nil {
			for _, xy := range pts.Children("xy") {
				s += fmt.Sprintf(" %s,%s", xy.Arg(0), xy.Arg(1))
			}
		}
		width := g.Child("width")
		if st := g.Child("stroke"); st != nil {
			width = st.Child("width")
		}
		out = append(out, s+" width "+width.Arg(0))
	}
	return out
}

// TestFootprintSilkMatchesKiCadLibrary checks that every footprint's
// silkscreen outline — the chip's notch, the pin-1 marks, the
// electrolytic's "+", the LED's flat — is the one KiCad's library draws.
func TestFootprintSilkMatchesKiCadLibrary(t *testing.T) {
	eachLibraryFootprint(t, "outlines", func(id string, fp, want *kicad.Expr) {
		got, lib := libSilk(fp), libSilk(want)
		if len(got) != len(lib) {
			t.Errorf("%s: %d silkscreen drawings, KiCad's library %d", id, len(got), len(lib))
			return
		}
		for i, g := range got {
			if g != lib[i] {
				t.Errorf("%s: silkscreen drawing %d is %s, KiCad's library %s", id, i, g, lib[i])
			}
		}
	})
}

// pcbnewScript loads each board file given with Debian KiCad's pcbnew
// module and prints, per file, the footprints and the pads on each net, in
// KiCad's own coordinates (nm) the board outline, each footprint's
// courtyard and its pads' box, and the footprints pcbnew finds differing
// from their library copies in $FP_DIR (FootprintNeedsUpdate, what its
// "Update Footprints from Library" lists).
const pcbnewScript = `
import json, os, sys
import pcbnew
def box(r):
    return [r.GetX(), r.GetY(), r.GetRight(), r.GetBottom()]
out, lib = {}, {}
for path in sys.argv[1:]:
    b = pcbnew.LoadBoard(path)
    fps, nets, places, outdated = [], {}, {}, []
    for fp in b.GetFootprints():
        ref = fp.GetReference()
        fid = fp.GetFPID()
        key = (str(fid.GetLibNickname()), str(fid.GetLibItemName()))
        if key not in lib:
            lib[key] = pcbnew.FootprintLoad(os.path.join(os.environ["FP_DIR"], key[0] + ".pretty"), key[1])
        if lib[key] is None or fp.FootprintNeedsUpdate(lib[key]):
            outdated.append(ref)
        if key[0] != "MountingHole":
            fps.append([ref, fp.GetFPIDAsString()])
        crt = [box(g.GetBoundingBox()) for g in fp.GraphicalItems() if g.GetLayer() == pcbnew.F_CrtYd]
        pads = [box(p.GetBoundingBox()) for p in fp.Pads()]
        rows = sorted(set(p.GetPosition().y for p in fp.Pads() if p.GetNumber() == "1"))
        places[ref] = {"courtyard": crt[0] if crt else None, "pads": [min(p[0] for p in pads), min(p[1] for p in pads), max(p[2] for p in pads), max(p[3] for p in pads)], "pin1y": rows[0] if rows else 0}
        for p in fp.Pads():
            if p.GetNetname():
                nets.setdefault(p.GetNetname(), []).append([ref, p.GetNumber()])
    e = b.GetBoardEdgesBoundingBox()
    out[path] = {"version": pcbnew.Version(), "footprints": fps, "nets": nets, "netcount": b.GetNetCount(), "edge": box(e), "places": places, "outdated": outdated}
json.dump(out, sys.stdout)
`

// pcbnewBoard is what the script reports of one board file.
type pcbnewBoard struct {
	Version    string
	Footprints [][2]string
	Nets       map[string][][2]string
	NetCount   int
	Edge       box
	Outdated   []string
	Places     map[string]struct {
		Courtyard *box
		Pads      box
		Pin1Y     int `json:"pin1y"`
	}
}

// TestPcbnewLoadsTheBoards has KiCad itself load the committed board files
// and checks its view of them against the hw netlist.
func TestPcbnewLoadsTheBoards(t *testing.T) {
	testenv.Long(t, "pcbnew loading every board")
	var files []string
	boards := allBoards(t)
	for _, b := range boards {
		base := kicad.BaseOf(b)
		files = append(files, filepath.Join(kicadDir, base, base+".kicad_pcb"))
	}
	got := loadWithPcbnew(t, files)
	for i, b := range boards {
		g, ok := got[files[i]]
		if !ok {
			t.Fatalf("pcbnew said nothing about %s", files[i])
		}
		what := fmt.Sprintf("pcbnew %s loading %s", g.Version, filepath.Base(files[i]))
		fps := checkPcbnewNetlist(t, what, b, g)
		checkPcbnewPlacement(t, what, b, g, fps)
		if len(g.Outdated) > 0 {
			t.Errorf("%s: pcbnew finds %v differing from their library copies", what, g.Outdated)
		}
	}
}

// loadWithPcbnew runs pcbnewScript on the files, or skips without KiCad.
func loadWithPcbnew(t *testing.T, files []string) map[string]pcbnewBoard {
	t.Helper()
	const python = "/usr/bin/python3" // pcbnew is built for Debian's Python, not others on PATH
	if err := exec.Command(python, "-c", "import pcbnew").Run(); err != nil {
		testenv.Missing(t, "%s cannot import pcbnew (%v): install Debian's kicad package (apt-get install -y kicad) to check the boards in KiCad", python, err)
	}
	cmd := exec.Command(python, append([]string{"-c", pcbnewScript}, files...)...)
	cmd.Env = append(os.Environ(), "FP_DIR="+kicad.FootprintDir())
	cmd.Stderr = nil // pcbnew prints font warnings there
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pcbnew: %v", err)
	}
	var got map[string]pcbnewBoard
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("pcbnew output: %v\n%s", err, out)
	}
	return got
}

// checkPcbnewNetlist compares KiCad's footprints and nets with the board's,
// and returns the footprints' library names by reference.
func checkPcbnewNetlist(t *testing.T, what string, b *hw.Netlist, g pcbnewBoard) map[string]string {
	t.Helper()
	fps := map[string]string{}
	for _, f := range g.Footprints {
		if _, dup := fps[f[0]]; dup {
			t.Errorf("%s: %s placed twice", what, f[0])
		}
		fps[f[0]] = f[1]
	}
	sameFootprints(t, what, fps, footprintRefs(b))
	nets := map[string][]kicad.Node{}
	unconnected := 0
	for name, pads := range g.Nets {
		if strings.HasPrefix(name, "unconnected-(") {
			// KiCad's net for a pin the schematic leaves unconnected: one
			// pad, on no hw net.
			unconnected++
			pin, _ := strconv.Atoi(pads[0][1])
			if len(pads) != 1 || b.NetOf(hw.Node{Ref: pads[0][0], Pin: pin}) != nil {
				t.Errorf("%s: %s holds %v, want one pad on no hw net", what, name, pads)
			}
			continue
		}
		for _, p := range pads {
			nets[kicad.NetLabel(name)] = append(nets[kicad.NetLabel(name)], kicad.Node{Ref: p[0], Pin: p[1]})
		}
	}
	sameNets(t, what, nets, hwNets(b))
	if g.NetCount != len(b.Nets)+unconnected+1 { // net 0 is "no net"
		t.Errorf("%s: %d nets, want %d, %d for unconnected pins and the empty net", what, g.NetCount, len(b.Nets), unconnected)
	}
	return fps
}

// checkPcbnewPlacement checks the placement as KiCad sees it: every pad on
// the board, courtyards inside it but for the edge connectors, which hang
// over the top or bottom edge, decoupling capacitors beside their chips,
// and no courtyards overlapping.
func checkPcbnewPlacement(t *testing.T, what string, b *hw.Netlist, g pcbnewBoard, fps map[string]string) {
	t.Helper()
	// The outline's box includes half of its 0.1 mm line.
	edge := box{g.Edge[0] + 50000, g.Edge[1] + 50000, g.Edge[2] - 50000, g.Edge[3] - 50000}
	var refs []string
	for ref, pl := range g.Places {
		refs = append(refs, ref)
		if pl.Courtyard == nil {
			t.Errorf("%s: %s has no courtyard", what, ref)
			continue
		}
		if !edge.holds(pl.Pads) {
			t.Errorf("%s: %s's pads %v are not all on the board %v", what, ref, pl.Pads, edge)
		}
		m := edgePinOffset.FindStringSubmatch(fps[ref])
		if m == nil {
			if !edge.holds(*pl.Courtyard) {
				t.Errorf("%s: %s's courtyard %v leaves the board %v", what, ref, *pl.Courtyard, edge)
			}
			continue
		}
		// An edge connector: pin row 1 at the footprint's edge offset from
		// the top or bottom edge, the housing out over that edge.
		mm, _ := strconv.ParseFloat(m[1], 64)
		off := int(mm * 1e6)
		c := *pl.Courtyard
		atTop := pl.Pin1Y-edge[1] == off && c[1] < edge[1]
		atBottom := edge[3]-pl.Pin1Y == off && c[3] > edge[3]
		if !atTop && !atBottom {
			t.Errorf("%s: %s (pin row 1 at y %d, courtyard %v) is not mounted on the top or bottom edge of %v with its pins %v mm in", what, ref, pl.Pin1Y, c, edge, m[1])
		}
	}
	for _, c := range b.Components {
		if c.Decouples == nil {
			continue
		}
		cc, chip := g.Places[c.Ref].Courtyard, g.Places[c.Decouples.Ref].Courtyard
		if cc == nil || chip == nil || cc.gap(*chip) > 2000000 { // 1.27 mm apart, give or take the routing grid

			t.Errorf("%s: decoupling capacitor %s is not beside %s (courtyards %v, %v)", what, c.Ref, c.Decouples.Ref, cc, chip)
		}
	}
	for i, a := range refs {
		for _, r := range refs[i+1:] {
			if ca, cb := g.Places[a].Courtyard, g.Places[r].Courtyard; ca != nil && cb != nil && ca.overlaps(*cb) {
				t.Errorf("%s: the courtyards of %s %v and %s %v overlap", what, a, *ca, r, *cb)
			}
		}
	}
}

// edgePinOffset finds an edge connector's pin-to-edge distance in its
// KiCad library name.
var edgePinOffset = regexp.MustCompile(`EdgePinOffset([0-9.]+)mm`)

// box is x0, y0, x1, y1 in KiCad's nanometres.
type box [4]int

func (b box) holds(c box) bool { return c[0] >= b[0] && c[1] >= b[1] && c[2] <= b[2] && c[3] <= b[3] }

func (b box) overlaps(c box) bool { return b[0] < c[2] && c[0] < b[2] && b[1] < c[3] && c[1] < b[3] }

// gap is the distance between two boxes along the axis where they are
// furthest apart (0 when they touch or overlap).
func (b box) gap(c box) int {
	return max(c[0]-b[2], b[0]-c[2], c[1]-b[3], b[1]-c[3], 0)
}

// allBoards are the boards of every size and the Pi adapter.
func allBoards(t *testing.T) []*hw.Netlist {
	t.Helper()
	var out []*hw.Netlist
	for _, n := range hw.Sizes {
		out = append(out, hw.MustNew(n))
	}
	pi, err := hw.PiAdapter()
	if err != nil {
		t.Fatal(err)
	}
	return append(out, pi)
}

// TestSilkscreenToSolderBy reads every board's silkscreen back and checks
// what a builder solders by: the board's name, PE count and revision; an
// outline on every part; "+5V" and "GND" at the power input; on each PE's
// LED its PE and which lead is green and which red; and an M3 hole in
// each corner with no copper within 3.6 mm of its centre (a screw head
// or washer is 7 mm across).
func TestSilkscreenToSolderBy(t *testing.T) {
	for _, b := range allBoards(t) {
		src := boardFile(t, kicad.BaseOf(b))
		root, err := kicad.ParseExpr(string(src))
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, g := range root.Children("gr_text") {
			if g.Child("layer").Arg(0) == "F.SilkS" {
				titles = append(titles, g.Arg(0))
			}
		}
		want := fmt.Sprintf("%d-PE rev %s", b.PEs, b.Revision)
		if b.Name == hw.PiAdapterName {
			want = "Pi adapter rev " + b.Revision
		}
		if !slices.Contains(titles, "TTL_PAPERS") || !slices.Contains(titles, want) {
			t.Errorf("%s: no silkscreen title \"TTL_PAPERS\" over %q among %q", b.Name, want, titles)
		}
		edge := root.Child("gr_rect")
		x0, y0 := num(t, edge.Child("start").Arg(0)), num(t, edge.Child("start").Arg(1))
		x1, y1 := num(t, edge.Child("end").Arg(0)), num(t, edge.Child("end").Arg(1))
		var holes [][2]float64
		for _, fp := range root.Children("footprint") {
			at := fp.Child("at")
			fx, fy := num(t, at.Arg(0)), num(t, at.Arg(1))
			if fp.Arg(0) == "MountingHole:MountingHole_3.2mm_M3" {
				holes = append(holes, [2]float64{fx, fy})
				continue
			}
			ref, texts := "", map[string]bool{}
			for _, tx := range append(fp.Children("fp_text"), fp.Children("property")...) {
				if tx.Child("layer").Arg(0) != "F.SilkS" {
					continue
				}
				texts[tx.Arg(1)] = true
				if tx.Arg(0) == "reference" || tx.Arg(0) == "Reference" {
					ref = tx.Arg(1)
				}
			}
			if len(libSilk(fp)) == 0 || !texts[ref] {
				t.Errorf("%s: %s has no outline or no reference on the silkscreen", b.Name, ref)
			}
			var need []string
			switch c := b.Component(ref); {
			case c == nil:
				t.Errorf("%s: footprint %s is not in the netlist", b.Name, ref)
			case c.Part == hw.LEDBicolour:
				pe, _ := strconv.Atoi(strings.TrimPrefix(ref, "D"))
				need = []string{fmt.Sprintf("PE %d", pe-1), "G", "R"}
			case c.Part == hw.PowerIn:
				need = []string{"+5V", "GND"}
			}
			for _, n := range need {
				if !texts[n] {
					t.Errorf("%s: %s has no %q on the silkscreen (has %v)", b.Name, ref, n, texts)
				}
			}
		}
		corners := 0
		for _, h := range holes {
			for _, c := range [][2]float64{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
				if math.Abs(h[0]-c[0]) <= 5 && math.Abs(h[1]-c[1]) <= 5 {
					corners++
				}
			}
			for _, s := range root.Children("segment") {
				ax, ay := num(t, s.Child("start").Arg(0)), num(t, s.Child("start").Arg(1))
				bx, by := num(t, s.Child("end").Arg(0)), num(t, s.Child("end").Arg(1))
				if d := kicad.PointSeg(h[0], h[1], ax, ay, bx, by) - num(t, s.Child("width").Arg(0))/2; d < 3.6 {
					t.Errorf("%s: a track passes %.2f mm from the centre of the mounting hole at (%v, %v)", b.Name, d, h[0], h[1])
				}
			}
			for _, v := range root.Children("via") {
				vx, vy := num(t, v.Child("at").Arg(0)), num(t, v.Child("at").Arg(1))
				if d := math.Hypot(vx-h[0], vy-h[1]) - num(t, v.Child("size").Arg(0))/2; d < 3.6 {
					t.Errorf("%s: a via %.2f mm from the centre of the mounting hole at (%v, %v)", b.Name, d, h[0], h[1])
				}
			}
		}
		if len(holes) != 4 || corners != 4 {
			t.Errorf("%s: %d mounting holes, %d of them in a corner; want one in each corner", b.Name, len(holes), corners)
		}
	}
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSupplyTracks: on every routed board each track of a supply (VCC,
// GND, and the Pi adapter's 3.3 V) is the power width, and the project's
// net classes put those nets in the Power class that says so.
func TestSupplyTracks(t *testing.T) {
	for _, b := range kicad.Routed() {
		base := kicad.BaseOf(b)
		root, err := kicad.ParseExpr(string(boardFile(t, base)))
		if err != nil {
			t.Fatal(err)
		}
		supplies := map[string]bool{}
		// KiCad names the power symbols' nets bare and a label's "/"-prefixed.
		for name, kiName := range map[string]string{hw.VCC: hw.VCC, hw.GND: hw.GND, hw.NetPi3V3: "/" + hw.NetPi3V3} {
			if n := b.Net(name); n != nil && len(n.Nodes) > 1 {
				supplies[kiName] = true
			}
		}
		code := map[string]string{}
		for _, n := range root.Children("net") {
			code[n.Arg(0)] = n.Arg(1)
		}
		want := strconv.FormatFloat(float64(kicad.Rules.PowerTrack)/1000, 'f', -1, 64)
		seen := map[string]int{}
		for _, s := range root.Children("segment") {
			net := code[s.Child("net").Arg(0)]
			if !supplies[net] {
				continue
			}
			seen[net]++
			if w := s.Child("width").Arg(0); w != want {
				t.Errorf("%s: a %s track is %s mm wide, want %s", base, net, w, want)
			}
		}
		var pro struct {
			NetSettings struct {
				Patterns []struct{ Netclass, Pattern string } `json:"netclass_patterns"`
			} `json:"net_settings"`
		}
		if err := json.Unmarshal(committed(t, base, ".kicad_pro"), &pro); err != nil {
			t.Fatal(err)
		}
		for net := range supplies {
			if seen[net] == 0 {
				t.Errorf("%s: no track of %s", base, net)
			}
			if !slices.Contains(pro.NetSettings.Patterns, struct{ Netclass, Pattern string }{"Power", net}) {
				t.Errorf("%s: the project does not put %s in the Power net class", base, net)
			}
		}
	}
}
