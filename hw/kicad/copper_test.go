package kicad_test

import (
	"encoding/csv"
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

// partition is a set of pad groups, each group its sorted pads joined by
// commas, the groups sorted: two boards connect the same pads exactly
// when their partitions are equal.
func partition(groups [][]kicad.Node, keep func([]kicad.Node) bool) []string {
	var out []string
	for _, g := range groups {
		if !keep(g) {
			continue
		}
		var s []string
		for _, n := range sortNodes(g) {
			s = append(s, n.Ref+"."+n.Pin)
		}
		out = append(out, strings.Join(s, ","))
	}
	slices.Sort(out)
	return out
}

// hwPartition is the hw netlist's nets as a partition.
func hwPartition(b *hw.Netlist) []string {
	var groups [][]kicad.Node
	for _, nodes := range hwNets(b) {
		groups = append(groups, nodes)
	}
	return partition(groups, func([]kicad.Node) bool { return true })
}

// onHwNet keeps the groups but a lone pad on no hw net (a pin left
// unconnected, which copper rightly joins to nothing).
func onHwNet(b *hw.Netlist) func([]kicad.Node) bool {
	return func(g []kicad.Node) bool {
		if len(g) > 1 {
			return true
		}
		pin, _ := strconv.Atoi(g[0].Pin)
		return b.NetOf(hw.Node{Ref: g[0].Ref, Pin: pin}) != nil
	}
}

// diff lists what one partition has and the other lacks, both ways.
func diff(got, want []string) string {
	var s []string
	for _, g := range got {
		if !slices.Contains(want, g) {
			s = append(s, "copper joins "+g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			s = append(s, "the netlist joins "+w)
		}
	}
	return strings.Join(s, "\n")
}

// TestCopperIsTheNetlist reads the tracks, vias and pads of every routed
// board and checks that the copper joins exactly the pins of each hw net —
// the netlist the emulator simulates — no more (a short) and no fewer (a
// missing track).
func TestCopperIsTheNetlist(t *testing.T) {
	for _, b := range kicad.Routed() {
		groups, err := kicad.ReadCopper(boardFile(t, kicad.BaseOf(b)))
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(partition(groups, onHwNet(b)), hwPartition(b)); d != "" {
			t.Errorf("%s: the copper is not the netlist:\n%s", b.Name, d)
		}
	}
}

// longestSegment is the line of the board's longest track: a bridge of its
// net's tree, whose removal must split the net.
func longestSegment(t *testing.T, src string) string {
	t.Helper()
	seg := regexp.MustCompile(`(?m)^  \(segment \(start (\S+) (\S+)\) \(end (\S+) (\S+)\).*\n`)
	best, bestLen := "", 0.0
	for _, m := range seg.FindAllStringSubmatch(src, -1) {
		var v [4]float64
		for i := range v {
			v[i], _ = strconv.ParseFloat(m[i+1], 64)
		}
		if l := max(v[2]-v[0], v[0]-v[2]) + max(v[3]-v[1], v[1]-v[3]); l > bestLen {
			best, bestLen = m[0], l
		}
	}
	if best == "" {
		t.Fatal("no tracks on the board")
	}
	return best
}

// TestCopperReaderFindsMistakes breaks the 4-PE board's copper twice — one
// track removed, one track added between two nets' pins — and checks that
// the reader sees each: otherwise the test above proves nothing.
func TestCopperReaderFindsMistakes(t *testing.T) {
	b := hw.MustNew(4)
	src := string(boardFile(t, kicad.Base(4)))
	want := hwPartition(b)

	cut := strings.Replace(src, longestSegment(t, src), "", 1)
	groups, err := kicad.ReadCopper([]byte(cut))
	if err != nil {
		t.Fatal(err)
	}
	got := partition(groups, onHwNet(b))
	if len(got) != len(want)+1 {
		t.Errorf("with a track removed the copper has %d groups, want one more than the %d nets:\n%s", len(got), len(want), diff(got, want))
	}

	// U1 pins 1 and 2 (PE0.D6 and PE1.D6) are 2.54 mm apart: a track across.
	u1 := regexp.MustCompile(`\(footprint "Package_DIP:DIP-14_W7.62mm" \(layer "F.Cu"\)\n\s+\(tstamp \S+\)\n\s+\(at (\S+) (\S+)\)\n(?:.*\n){5}\s+\(property "Reference" "U1"`).FindStringSubmatch(src)
	if u1 == nil {
		t.Fatal("U1 not found in the board file")
	}
	x, _ := strconv.ParseFloat(u1[1], 64)
	y, _ := strconv.ParseFloat(u1[2], 64)
	short := strings.Replace(src, "  (segment", fmt.Sprintf("  (segment (start %v %v) (end %v %v) (width 0.25) (layer \"B.Cu\") (net 0))\n  (segment", x, y, x, y+2.54), 1)
	if groups, err = kicad.ReadCopper([]byte(short)); err != nil {
		t.Fatal(err)
	}
	got = partition(groups, onHwNet(b))
	if len(got) != len(want)-1 || !strings.Contains(diff(got, want), "U1.1,U1.2") {
		t.Errorf("with U1 pins 1 and 2 shorted the copper has %d groups (want %d):\n%s", len(got), len(want)-1, diff(got, want))
	}
}

// kicadCLI returns the path of kicad-cli, or skips (fails in CI).
func kicadCLI(t *testing.T) string {
	t.Helper()
	testenv.Long(t, "KiCad's rules checks and exports of every board")
	p, err := exec.LookPath("kicad-cli")
	if err != nil {
		testenv.Missing(t, "kicad-cli not found: install KiCad 9 (apt-get install -t bookworm-backports kicad, after adding bookworm-backports to apt's sources) to check the routed boards with KiCad")
	}
	return p
}

// boardCopy copies a board's project, schematic, BOM and board into a
// temporary directory, for kicad-cli to read (and leave its caches in).
func boardCopy(t *testing.T, base string, pcb []byte) string {
	t.Helper()
	return projectCopy(t, base, ".kicad_pcb", pcb)
}

// projectCopy writes src as the project's file ext in a temporary
// directory beside copies of its committed project, schematic and BOMs
// (src replacing the one of those it is), and returns its path.
func projectCopy(t *testing.T, base, ext string, src []byte) string {
	t.Helper()
	dir := t.TempDir()
	for _, e := range []string{".kicad_pro", ".kicad_sch", ".kicad_dru", "-bom.csv", "-bom-jlcpcb.csv"} {
		if e == ext {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, base+e), committed(t, base, e), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The sheets below the root of a hierarchical schematic.
	subs, err := filepath.Glob(filepath.Join(kicadDir, base, "*.kicad_sch"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range subs {
		if name := filepath.Base(sub); name != base+".kicad_sch" {
			src, err := os.ReadFile(sub)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The project's footprint library table, for DRC's library checks.
	if err := os.WriteFile(filepath.Join(dir, "fp-lib-table"), kicad.FootprintTable(), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, base+ext)
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// drcReport is what kicad-cli's JSON DRC report says.
type drcReport struct {
	Violations, Unconnected, Parity []struct {
		Type, Severity, Description string
	}
}

func (r *drcReport) UnmarshalJSON(b []byte) error {
	var raw struct {
		Violations  []json.RawMessage `json:"violations"`
		Unconnected []json.RawMessage `json:"unconnected_items"`
		Parity      []json.RawMessage `json:"schematic_parity"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, l := range []struct {
		from []json.RawMessage
		to   *[]struct{ Type, Severity, Description string }
	}{{raw.Violations, &r.Violations}, {raw.Unconnected, &r.Unconnected}, {raw.Parity, &r.Parity}} {
		for _, m := range l.from {
			var v struct{ Type, Severity, Description string }
			if err := json.Unmarshal(m, &v); err != nil {
				return err
			}
			*l.to = append(*l.to, v)
		}
	}
	return nil
}

// drc runs KiCad's design-rule check, with schematic parity, on a board.
func drc(t *testing.T, cli, pcb string) drcReport {
	t.Helper()
	out := filepath.Join(filepath.Dir(pcb), "drc.json")
	cmd := exec.Command(cli, "pcb", "drc", "--format", "json", "--schematic-parity", "--severity-all", "-o", out, pcb)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kicad-cli pcb drc: %v\n%s", err, msg)
	}
	src, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r drcReport
	if err := json.Unmarshal(src, &r); err != nil {
		t.Fatalf("DRC report: %v", err)
	}
	return r
}

// TestKiCadDRC has KiCad check every routed board against the design
// rules in its project file and against its schematic: no violation of
// any severity (the library checks included: every footprint is KiCad's
// library copy), nothing unconnected, no difference from the schematic.
// Then it removes the longest track from the 4-PE board, and KiCad must
// find the net it leaves unconnected; and it moves one silkscreen line of
// a chip's outline, and KiCad must find the footprint differing from its
// library's.
func TestKiCadDRC(t *testing.T) {
	cli := kicadCLI(t)
	for _, b := range kicad.Routed() {
		base := kicad.BaseOf(b)
		r := drc(t, cli, boardCopy(t, base, boardFile(t, base)))
		if len(r.Violations)+len(r.Unconnected)+len(r.Parity) != 0 {
			t.Errorf("%s: KiCad's DRC finds %d violations, %d unconnected items, %d schematic parity issues:\n%v\n%v\n%v",
				b.Name, len(r.Violations), len(r.Unconnected), len(r.Parity), r.Violations, r.Unconnected, r.Parity)
		}
	}
	src := string(boardFile(t, kicad.Base(4)))
	r := drc(t, cli, boardCopy(t, kicad.Base(4), []byte(strings.Replace(src, longestSegment(t, src), "", 1))))
	if len(r.Unconnected) == 0 {
		t.Errorf("4 PEs with a track removed: KiCad's DRC finds nothing unconnected (%d violations)", len(r.Violations))
	}
	const line = "(start 1.16 -1.33)" // the first line of a DIP's outline in KiCad's library
	if !strings.Contains(src, line) {
		t.Fatalf("4 PEs: no DIP outline line %s in the board", line)
	}
	r = drc(t, cli, boardCopy(t, kicad.Base(4), []byte(strings.Replace(src, line, "(start 1.16 -1.2)", 1))))
	if !slices.ContainsFunc(r.Violations, func(v struct{ Type, Severity, Description string }) bool { return v.Type == "lib_footprint_mismatch" }) {
		t.Errorf("4 PEs with a chip's outline changed: KiCad's DRC finds no footprint differing from its library's: %v", r.Violations)
	}
}

// ipcNet reads an IPC-D-356 test record of a component pin: its net (as
// KiCad writes it: upper case, cut to 14 characters) and its pad.
var ipcNet = regexp.MustCompile(`(?m)^317(\S+)\s+(\S+)\s+-(\S+)\s`)

// ipcD356 is KiCad's IPC-D-356 export of a committed board.
func ipcD356(t *testing.T, cli, base string) []byte {
	t.Helper()
	pcb := boardCopy(t, base, boardFile(t, base))
	out := filepath.Join(filepath.Dir(pcb), "board.d356")
	if msg, err := exec.Command(cli, "pcb", "export", "ipcd356", "-o", out, pcb).CombinedOutput(); err != nil {
		t.Fatalf("kicad-cli pcb export ipcd356: %v\n%s", err, msg)
	}
	src, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// ipcPad reads an IPC-D-356 test record of a component pin: its
// reference and its position, in ten-thousandths of an inch (KiCad's
// "UNITS CUST 0"), y up.
var ipcPad = regexp.MustCompile(`(?m)^317\S*\s+(\S+)\s+-\S+\s.*?X([+-]\d+)Y([+-]\d+)`)

// TestPlacementCentres: every part in each routed board's JLCPCB
// placement file sits within 1 mm of the centre of its pads as KiCad
// places them (its IPC-D-356 export), not at its pin 1.
func TestPlacementCentres(t *testing.T) {
	cli := kicadCLI(t)
	for _, b := range kicad.Routed() {
		base := kicad.BaseOf(b)
		box := map[string][4]float64{}
		for _, m := range ipcPad.FindAllStringSubmatch(string(ipcD356(t, cli, base)), -1) {
			if m[1] == "VIA" {
				continue
			}
			x, _ := strconv.ParseFloat(m[2], 64)
			y, _ := strconv.ParseFloat(m[3], 64)
			x, y = x*0.00254, y*0.00254
			r, ok := box[m[1]]
			if !ok {
				r = [4]float64{x, y, x, y}
			}
			box[m[1]] = [4]float64{min(r[0], x), min(r[1], y), max(r[2], x), max(r[3], y)}
		}
		cpl, err := os.ReadFile(filepath.Join(kicadDir, base, kicad.FabDir, base+"-cpl-jlcpcb.csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(strings.NewReader(string(cpl))).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("%s: CPL file: %v", base, err)
		}
		for _, r := range rows[1:] {
			x, err1 := strconv.ParseFloat(strings.TrimSuffix(r[1], "mm"), 64)
			y, err2 := strconv.ParseFloat(strings.TrimSuffix(r[2], "mm"), 64)
			p, ok := box[r[0]]
			if err1 != nil || err2 != nil || !ok {
				t.Errorf("%s: CPL row %v: bad position, or no pads in KiCad's export", base, r)
				continue
			}
			cx, cy := (p[0]+p[2])/2, (p[1]+p[3])/2
			if math.Abs(x-cx) > 1 || math.Abs(y-cy) > 1 {
				t.Errorf("%s: %s placed at (%.3f, %.3f) mm, its pads' centre is (%.3f, %.3f)", base, r[0], x, y, cx, cy)
			}
		}
	}
}

// TestKiCadNetsAreTheNetlist exports each routed board as IPC-D-356, the
// netlist a board house's flying-probe tester checks the bare board
// against, and compares KiCad's nets in it with the hw netlist.
// With TestKiCadDRC (KiCad finds the copper joins exactly those nets),
// KiCad's view of the copper is the emulator's netlist.
func TestKiCadNetsAreTheNetlist(t *testing.T) {
	cli := kicadCLI(t)
	for _, b := range kicad.Routed() {
		src := ipcD356(t, cli, kicad.BaseOf(b))
		byNet := map[string][]kicad.Node{}
		var names []string
		for _, m := range ipcNet.FindAllStringSubmatch(string(src), -1) {
			if m[2] == "VIA" || m[1] == "N/C" {
				continue
			}
			if _, ok := byNet[m[1]]; !ok {
				names = append(names, m[1])
			}
			byNet[m[1]] = append(byNet[m[1]], kicad.Node{Ref: m[2], Pin: m[3]})
		}
		var groups [][]kicad.Node
		for _, name := range names {
			groups = append(groups, byNet[name])
		}
		if d := diff(partition(groups, onHwNet(b)), hwPartition(b)); d != "" {
			t.Errorf("%s: KiCad's IPC-D-356 nets are not the netlist:\n%s", b.Name, d)
		}
	}
}
