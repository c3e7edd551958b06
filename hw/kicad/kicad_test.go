package kicad_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/papers"
)

// kicadDir is the committed kicad/ folder at the repository root.
var kicadDir = filepath.Join("..", "..", "kicad")

// TestCommittedFilesAreFresh fails when the files under kicad/ differ from
// what the generator writes now: regenerate with `go run ./cmd/papersctl kicad`.
// A board is compared without its pours' fills, which KiCad's filler
// makes in minutes of CPU for all boards; TestZoneFillsAreCurrent checks
// those.
func TestCommittedFilesAreFresh(t *testing.T) {
	testenv.SlowUnderRace(t, "routing the boards")
	needLibraries(t)
	want, err := kicad.AllUnfilledFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range slices.Sorted(maps.Keys(want)) {
		got, err := os.ReadFile(filepath.Join(kicadDir, p))
		if err != nil {
			t.Errorf("%v (run `go run ./cmd/papersctl kicad`)", err)
			continue
		}
		if filepath.Ext(p) == ".kicad_pcb" {
			got = kicad.Unfill(got)
		}
		if !bytes.Equal(got, want[p]) {
			t.Errorf("kicad/%s is stale: run `go run ./cmd/papersctl kicad` and commit the result", p)
		}
	}
	// Nothing else may sit there: a file the generator no longer writes is stale too.
	err = filepath.Walk(kicadDir, func(path string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() && info.Name() == kicad.FabDir {
			return filepath.SkipDir // TestFabOutputsAreCurrent checks these
		}
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(kicadDir, path)
		if _, ok := want[rel]; !ok {
			t.Errorf("kicad/%s is not generated any more: delete it", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hwNets is the board's netlist in the reader's terms.
func hwNets(b *hw.Netlist) map[string][]kicad.Node {
	nets := map[string][]kicad.Node{}
	for _, n := range b.Nets {
		for _, nd := range n.Nodes {
			nets[n.Name] = append(nets[n.Name], kicad.Node{Ref: nd.Ref, Pin: strconv.Itoa(nd.Pin)})
		}
	}
	return nets
}

func sameNets(t *testing.T, what string, got, want map[string][]kicad.Node) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		g, w := sortNodes(got[name]), sortNodes(want[name])
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s: net %s has pins %v, the hw netlist %v", what, name, g, w)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: net %s (pins %v) is not in the hw netlist", what, name, sortNodes(got[name]))
		}
	}
}

func sortNodes(ns []kicad.Node) []kicad.Node {
	out := append([]kicad.Node(nil), ns...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Ref != out[j].Ref {
			return out[i].Ref < out[j].Ref
		}
		return out[i].Pin < out[j].Pin
	})
	return out
}

// readSchematic reads a board's committed schematic, every sheet of its
// hierarchy.
func readSchematic(t *testing.T, base string) *kicad.Sheet {
	t.Helper()
	sheet, err := kicad.ReadSchematicTree(committed(t, base, ".kicad_sch"), func(file string) ([]byte, error) {
		return os.ReadFile(filepath.Join(kicadDir, base, file))
	})
	if err != nil {
		t.Fatal(err)
	}
	return sheet
}

// labelled renames a schematic's nets by their labels, without the path of
// the sheet below the root that holds a net (kicad.NetLabel): hw's names.
// Two nets of one label are two nets under that name, which sameNets
// finds.
func labelled(nets map[string][]kicad.Node) map[string][]kicad.Node {
	out := map[string][]kicad.Node{}
	for name, nodes := range nets {
		out[kicad.NetLabel(name)] = append(out[kicad.NetLabel(name)], nodes...)
	}
	return out
}

// TestSchematicConnectivityIsTheNetlist reads the committed schematic of
// every board size back, every sheet of its hierarchy, recomputes which
// pins its wires, labels, sheet pins and power symbols join, and compares
// net for net and pin for pin with hw.
func TestSchematicConnectivityIsTheNetlist(t *testing.T) {
	for _, n := range hw.Sizes {
		t.Run(fmt.Sprintf("%dPE", n), func(t *testing.T) {
			b := hw.MustNew(n)
			sheet := readSchematic(t, kicad.Base(n))
			conn, err := sheet.Connectivity()
			if err != nil {
				t.Fatal(err)
			}
			sameNets(t, "schematic", labelled(conn.Nets), hwNets(b))
			// Every placed unit is of a board component with its value and
			// footprint, each unit placed once, the units together having
			// every pin of the part but those it leaves unconnected inside
			// (NC); and every pin hw leaves open is open on the sheet.
			seen := map[string]bool{}
			units := map[string]map[int]bool{}
			pins := map[string][]string{}
			holes := 0
			for _, s := range sheet.Symbols {
				if s.Power {
					continue
				}
				if s.LibID == "Mechanical:MountingHole" {
					holes++ // no part of the circuit: the board's footprint's symbol
					continue
				}
				c := b.Component(s.Ref)
				if c == nil {
					t.Errorf("schematic part %s is not on the board", s.Ref)
					continue
				}
				seen[s.Ref] = true
				if s.Value != c.Part.Name || s.Footprint != c.Part.Footprint || s.LibID != c.Part.Symbol {
					t.Errorf("%s is %s %s %s on the sheet, %s %s %s on the board", s.Ref, s.LibID, s.Value, s.Footprint, c.Part.Symbol, c.Part.Name, c.Part.Footprint)
				}
				if units[s.Ref] == nil {
					units[s.Ref] = map[int]bool{}
				}
				if units[s.Ref][s.Unit] {
					t.Errorf("%s unit %d is placed twice", s.Ref, s.Unit)
				}
				units[s.Ref][s.Unit] = true
				for _, p := range sheet.Pins(s) {
					pins[s.Ref] = append(pins[s.Ref], p.Num)
				}
			}
			if len(seen) != len(b.Components) || holes != 4 {
				t.Errorf("schematic places %d parts and %d mounting holes, the board has %d and 4", len(seen), holes, len(b.Components))
			}
			for _, c := range b.Components {
				var want []string
				for _, p := range c.Part.Pins {
					if p.Type != hw.PinNC {
						want = append(want, strconv.Itoa(p.Num))
					}
				}
				slices.Sort(want)
				got := slices.Sorted(slices.Values(pins[c.Ref]))
				if !slices.Equal(got, want) {
					t.Errorf("%s's placed units have pins %v, the part %v", c.Ref, got, want)
				}
			}
			for _, nd := range conn.Unconnected {
				pin, _ := strconv.Atoi(nd.Pin)
				if net := b.NetOf(hw.Node{Ref: nd.Ref, Pin: pin}); net != nil {
					t.Errorf("%s pin %s is open on the sheet but on net %s", nd.Ref, nd.Pin, net.Name)
				}
			}
		})
	}
}

// TestNetlistFileIsTheNetlist does the same for the committed .net export.
func TestNetlistFileIsTheNetlist(t *testing.T) {
	for _, n := range hw.Sizes {
		b := hw.MustNew(n)
		src, err := os.ReadFile(filepath.Join(kicadDir, kicad.Base(n), kicad.Base(n)+".net"))
		if err != nil {
			t.Fatal(err)
		}
		nets, comps, err := kicad.ReadNetlist(src)
		if err != nil {
			t.Fatal(err)
		}
		sameNets(t, fmt.Sprintf("%d-PE .net", n), nets, hwNets(b))
		if len(comps) != len(b.Components)+4 {
			t.Errorf("%d-PE .net lists %d components, the board has %d and 4 mounting holes", n, len(comps), len(b.Components))
		}
		for i := range 4 {
			if got := comps[fmt.Sprintf("H%d", i+1)]; got != [2]string{"MountingHole_3.2mm_M3", "MountingHole:MountingHole_3.2mm_M3"} {
				t.Errorf("%d-PE .net: H%d is %v, want the mounting hole", n, i+1, got)
			}
		}
		for _, c := range b.Components {
			if got := comps[c.Ref]; got != [2]string{c.Part.Name, c.Part.Footprint} {
				t.Errorf("%d-PE .net: %s is %v, want %s %s", n, c.Ref, got, c.Part.Name, c.Part.Footprint)
			}
		}
	}
}

// TestReaderFindsMistakes proves the connectivity check can fail: a label
// renamed on the sheet shorts two nets, and a pin moved off its wire drops
// out of its net.
func TestReaderFindsMistakes(t *testing.T) {
	src := schematic(t, hw.MustNew(4))
	shorted := bytes.Replace(src, []byte(`(label "RDYQ"`), []byte(`(label "nINTQ"`), 1)
	sheet, err := kicad.ReadSchematic(shorted)
	if err != nil {
		t.Fatal(err)
	}
	if conn, err := sheet.Connectivity(); err == nil {
		if fmt.Sprint(sortNodes(conn.Nets["RDYQ"])) == fmt.Sprint(sortNodes(hwNets(hw.MustNew(4))["RDYQ"])) {
			t.Error("a relabelled RDYQ pin went unnoticed")
		}
	}
	sheet, err = kicad.ReadSchematic(src)
	if err != nil {
		t.Fatal(err)
	}
	sheet.Wires = sheet.Wires[1:]
	conn, err := sheet.Connectivity()
	if err != nil {
		t.Fatal(err)
	}
	diff := 0
	want := hwNets(hw.MustNew(4))
	for name, nodes := range want {
		if len(conn.Nets[name]) != len(nodes) {
			diff++
		}
	}
	if diff == 0 {
		t.Error("removing a wire changed no net")
	}
}

// TestEmulatorRunsTheGeneratedBoard: the netlist the files are generated
// from is the one the emulator runs — barriers and NANDs work on it.
func TestEmulatorRunsTheGeneratedBoard(t *testing.T) {
	for _, n := range hw.Sizes {
		b, err := emu.NewFromNetlist(hw.MustNew(n), n)
		if err != nil {
			t.Fatal(err)
		}
		err = emulate.RunOn(b, n, papers.Config{}, func(p *papers.PE) error {
			for i := 0; i < 3; i++ {
				if err := p.Barrier(); err != nil {
					return err
				}
			}
			x := uint8(0xf)
			if p.Self() == n-1 {
				x = 0x5
			}
			got, err := p.NAND(x)
			if err != nil {
				return err
			}
			if got != 0xa {
				return fmt.Errorf("PE %d: NAND = %#x, want 0xa", p.Self(), got)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%d-PE board: %v", n, err)
		}
	}
}

// TestSupplyIsFlagged: KiCad's electrical rules check wants VCC and GND
// driven, so each carries one PWR_FLAG, on the power input's pin.
func TestSupplyIsFlagged(t *testing.T) {
	for _, n := range hw.Sizes {
		sheet, err := kicad.ReadSchematic(schematic(t, hw.MustNew(n)))
		if err != nil {
			t.Fatal(err)
		}
		powerAt := map[string]string{} // point -> net of the power symbol there
		var flags []string
		for _, s := range sheet.Symbols {
			switch {
			case s.LibID == "power:PWR_FLAG":
				flags = append(flags, fmt.Sprint(s.At))
			case s.Power:
				powerAt[fmt.Sprint(s.At)] = s.Value
			}
		}
		var flagged []string
		for _, at := range flags {
			flagged = append(flagged, powerAt[at])
		}
		sort.Strings(flagged)
		if fmt.Sprint(flagged) != fmt.Sprint([]string{hw.GND, hw.VCC}) {
			t.Errorf("%d PEs: PWR_FLAGs sit on %q, want one on GND and one on VCC", n, flagged)
		}
	}
}

// schematic generates a board's schematic.
func schematic(t *testing.T, b *hw.Netlist) []byte {
	t.Helper()
	needLibraries(t)
	src, err := kicad.Schematic(b)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// boardFile reads the committed board file of a board (by its file name
// stem, kicad.BaseOf), which TestCommittedFilesAreFresh proves is what the
// generator writes.
func boardFile(t *testing.T, base string) []byte {
	t.Helper()
	return committed(t, base, ".kicad_pcb")
}

// committed reads one of a board's committed files: base+ext.
func committed(t *testing.T, base, ext string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(kicadDir, base, base+ext))
	if err != nil {
		t.Fatalf("%v (run `go run ./cmd/papersctl kicad`)", err)
	}
	return src
}

// Every KiCad file names its licence in its title block, and the licence
// itself is generated beside them, unmodified.
func TestLicenceNotice(t *testing.T) {
	needLibraries(t)
	b := hw.MustNew(4) // the smallest board: PCB routes it
	pcb, err := kicad.PCB(b, "x.kicad_sch")
	if err != nil {
		t.Fatal(err)
	}
	sch, err := kicad.Schematic(b)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string][]byte{"schematic": sch, "board": pcb, "netlist": kicad.Netlist(b, "x.kicad_sch")} {
		if !bytes.Contains(f, []byte(strconv.Quote(kicad.Notice))) {
			t.Errorf("the %s does not carry the licence notice %q", name, kicad.Notice)
		}
	}
	lic, err := os.ReadFile(filepath.Join(kicadDir, "LICENSE"))
	if err != nil || !bytes.HasPrefix(lic, []byte("CERN Open Hardware Licence Version 2 - Permissive\n")) {
		t.Errorf("kicad/LICENSE is not CERN-OHL-P-2.0: %v", err)
	}
}

// The schematic's connector areas name the board's own connector: on every
// sheet that has cable connectors.
func TestCableAreaTitle(t *testing.T) {
	for _, n := range hw.Sizes {
		want := map[*hw.Part]string{hw.DB25: "one DB-25 per PE", hw.IDC26: "one IDC-26 header per PE"}[hw.CableConnector(n)]
		for file, sch := range sheetFiles(t, kicad.Base(n)) {
			has := bytes.Contains(sch, []byte(`(lib_id "`+hw.CableConnector(n).Symbol+`")`))
			if titled := bytes.Contains(sch, []byte(`"Cable connectors: `+want+`"`)); titled != has {
				t.Errorf("%d PEs: %s has cable connectors %v, an area titled %q %v", n, file, has, want, titled)
			}
		}
	}
	const pi = "Printer port (DB-25 female socket)"
	if sch := committed(t, kicad.PiBase, ".kicad_sch"); !bytes.Contains(sch, []byte(`"`+pi+`"`)) {
		t.Errorf("Pi adapter: the schematic's connector area is not titled %q", pi)
	}
}
