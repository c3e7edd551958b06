package kicad_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
)

// sheetFiles reads every committed sheet of a board's schematic, by file
// name.
func sheetFiles(t *testing.T, base string) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(kicadDir, base, "*.kicad_sch"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("%s: no schematic (%v): run `go run ./cmd/papersctl kicad`", base, err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = src
	}
	return out
}

// TestSheetsHoldTheirPEs: the 16- and 32-PE schematics are a root sheet
// and one sheet per 8 PEs, each holding its PEs' cable connectors and
// status LEDs, none larger than A1; the root holds the power input and no
// cable connector; every part is on one sheet. The smaller boards are one
// sheet each.
func TestSheetsHoldTheirPEs(t *testing.T) {
	needLibraries(t)
	for _, n := range hw.Sizes {
		b := hw.MustNew(n)
		base := kicad.Base(n)
		files := sheetFiles(t, base)
		var want []string
		if n > 8 {
			for first := 0; first < n; first += 8 {
				want = append(want, fmt.Sprintf("pe%d-%d.kicad_sch", first, first+7))
			}
		}
		want = append(want, base+".kicad_sch")
		slices.Sort(want)
		if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, want) {
			t.Errorf("%d PEs: sheets %v, want %v", n, got, want)
			continue
		}
		placed := map[string]string{}
		for file, src := range files {
			if p := paper(src); !slices.Contains([]string{"A4", "A3", "A2", "A1"}, p) {
				t.Errorf("%d PEs: %s is on paper %s, larger than A1", n, file, p)
			}
			sheet, err := kicad.ReadSchematic(src)
			if err != nil {
				t.Fatal(err)
			}
			var first, last int
			if _, err := fmt.Sscanf(file, "pe%d-%d.kicad_sch", &first, &last); err != nil {
				first, last = -1, -1 // the root
			}
			for _, s := range sheet.Symbols {
				if s.Power {
					continue
				}
				if f, ok := placed[s.Ref]; ok && f != file {
					t.Errorf("%d PEs: %s is on %s and %s", n, s.Ref, f, file)
				}
				c := b.Component(s.Ref)
				if c == nil {
					continue // a mounting hole; TestSchematicConnectivityIsTheNetlist checks the rest
				}
				placed[s.Ref] = file
				if c.Part == hw.PowerIn && first >= 0 {
					t.Errorf("%d PEs: the power input %s is on %s, not the root", n, s.Ref, file)
				}
				if pe, ok := perPE(b, c); ok && (pe < first || pe > last) && n > 8 {
					t.Errorf("%d PEs: PE %d's %s (%s) is on %s", n, pe, s.Ref, c.Role, file)
				}
			}
		}
		if len(placed) != len(b.Components) {
			t.Errorf("%d PEs: the sheets place %d parts, the board has %d", n, len(placed), len(b.Components))
		}
	}
}

// perPE is the PE a cable connector or status LED serves.
func perPE(b *hw.Netlist, c *hw.Component) (int, bool) {
	for k := range b.PEs {
		if c.Ref == hw.ConnectorRef(k) || c.Role == fmt.Sprintf("PE %d status light", k) {
			return k, true
		}
	}
	return 0, false
}

// paper is a schematic's paper size.
func paper(src []byte) string {
	_, rest, _ := strings.Cut(string(src), "(paper ")
	p, _, _ := strings.Cut(rest, ")")
	return strings.Trim(strings.Fields(p + " ?")[0], `"`)
}

// TestReaderWalksTheHierarchy proves the hierarchy's joins are read, not
// assumed: the 16-PE schematic read from its root alone cannot be checked;
// a sheet pin removed from the root leaves its hierarchical label
// unjoined; and a hierarchical label renamed on a sheet moves its pins off
// their net.
func TestReaderWalksTheHierarchy(t *testing.T) {
	base := kicad.Base(16)
	files := sheetFiles(t, base)
	read := func(root []byte, sub func(string, []byte) []byte) (*kicad.Connectivity, error) {
		sheet, err := kicad.ReadSchematicTree(root, func(file string) ([]byte, error) {
			src, ok := files[file]
			if !ok {
				return nil, fmt.Errorf("no sheet %s", file)
			}
			return sub(file, src), nil
		})
		if err != nil {
			return nil, err
		}
		return sheet.Connectivity()
	}
	same := func(_ string, src []byte) []byte { return src }
	root := files[base+".kicad_sch"]
	if _, err := read(root, same); err != nil {
		t.Fatalf("the committed schematic: %v", err)
	}
	if sheet, err := kicad.ReadSchematic(root); err != nil {
		t.Fatal(err)
	} else if _, err := sheet.Connectivity(); err == nil {
		t.Error("the root sheet alone gave a netlist, its sheets unread")
	}
	pin := regexp.MustCompile(`(?m)^\s*\(pin "[^"]+" (input|output) .*\n`).Find(root)
	if pin == nil {
		t.Fatal("no sheet pin on the 16-PE root sheet")
	}
	if _, err := read(bytes.Replace(root, pin, nil, 1), same); err == nil {
		t.Errorf("with the sheet pin %s removed the hierarchy still joins", bytes.TrimSpace(pin))
	}
	label := regexp.MustCompile(`\(hierarchical_label "([^"]+)"`)
	renamed := func(file string, src []byte) []byte {
		if file != "pe0-7.kicad_sch" {
			return src
		}
		m := label.FindSubmatch(src)
		return bytes.Replace(src, m[0], []byte(`(hierarchical_label "`+string(m[1])+`x"`), 1)
	}
	if conn, err := read(root, renamed); err == nil && labelledEqual(conn, hw.MustNew(16)) {
		t.Error("a hierarchical label renamed on sheet PE0-7 went unnoticed")
	}
}

// labelledEqual reports whether a schematic's nets are the hw netlist's.
func labelledEqual(conn *kicad.Connectivity, b *hw.Netlist) bool {
	got, want := labelled(conn.Nets), hwNets(b)
	if len(got) != len(want) {
		return false
	}
	for name, nodes := range want {
		if fmt.Sprint(sortNodes(got[name])) != fmt.Sprint(sortNodes(nodes)) {
			return false
		}
	}
	return true
}
