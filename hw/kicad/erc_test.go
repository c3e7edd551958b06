package kicad_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// expectedERC are the only ERC findings a sheet may carry, by board: each
// excluded in the project with its reason (Project). Any other finding,
// and any finding not excluded, fails TestKiCadERC.
var expectedERC = map[string]struct {
	rule, item string // the rule, and the text of the finding's first item
	count      int
}{
	// KiCad draws a 74x245's A side as three-state (the part is a
	// transceiver); with DIR high its A pins are inputs, and the three
	// the adapter does not use are grounded, as a CMOS input must be.
	kicad.PiBase: {"pin_to_pin", "Symbol U1 Pin ", 3},
}

// ercViolation is one finding of kicad-cli's JSON ERC report.
type ercViolation struct {
	Type, Severity, Description, Comment string
	Excluded                             bool
	Items                                []struct{ Description string }
}

func (v ercViolation) String() string {
	var items []string
	for _, it := range v.Items {
		items = append(items, it.Description)
	}
	return fmt.Sprintf("%s %s: %s (%s)", v.Severity, v.Type, v.Description, strings.Join(items, "; "))
}

// kicadConfig is a KiCad configuration directory whose symbol library
// table is KiCad's standard one, so the rules check compares our symbols
// with the installed library whatever the user's own configuration says.
func kicadConfig(t *testing.T, cli string) string {
	t.Helper()
	table, err := os.ReadFile(filepath.Join(filepath.Dir(kicad.SymbolDir()), "template", "sym-lib-table"))
	if err != nil {
		testenv.Missing(t, "%v: install Debian's kicad-symbols package (apt-get install -t bookworm-backports kicad-symbols) for KiCad's rules check to compare our symbols with its library", err)
	}
	out, err := exec.Command(cli, "version").Output()
	if err != nil {
		t.Fatalf("kicad-cli version: %v", err)
	}
	// KiCad keeps its settings per major.minor version: 9.0.8 reads 9.0/.
	v := regexp.MustCompile(`^\d+\.\d+`).FindString(strings.TrimSpace(string(out)))
	if v == "" {
		t.Fatalf("kicad-cli version says %q, not a version number", out)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, v), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, v, "sym-lib-table"), table, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// erc runs KiCad's electrical rules check on a schematic, with the
// configuration cfg, and returns every violation of every severity.
func erc(t *testing.T, cli, cfg, sch string) []ercViolation {
	t.Helper()
	out := filepath.Join(filepath.Dir(sch), "erc.json")
	cmd := exec.Command(cli, "sch", "erc", "--format", "json", "--severity-all", "-o", out, sch)
	cmd.Env = append(os.Environ(), "KICAD_CONFIG_HOME="+cfg)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kicad-cli sch erc: %v\n%s", err, msg)
	}
	src, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Sheets []struct{ Violations []ercViolation }
	}
	if err := json.Unmarshal(src, &r); err != nil {
		t.Fatalf("ERC report: %v", err)
	}
	var vs []ercViolation
	for _, s := range r.Sheets {
		vs = append(vs, s.Violations...)
	}
	return vs
}

// unexpected is the findings on a board's sheet that are not excluded,
// or, when the excluded ones are not what expectedERC says, all of them.
func unexpected(base string, vs []ercViolation) []ercViolation {
	exp, n := expectedERC[base], 0
	bad := slices.DeleteFunc(slices.Clone(vs), func(v ercViolation) bool {
		if v.Excluded && v.Comment != "" && v.Type == exp.rule && len(v.Items) > 0 && strings.HasPrefix(v.Items[0].Description, exp.item) {
			n++
			return true
		}
		return false
	})
	if n != exp.count {
		return vs
	}
	return bad
}

// TestKiCadERC has KiCad's electrical rules check read the schematic of
// every board the generator writes: no finding of any severity but those
// expectedERC explains, excluded in the project (none on the boards
// themselves). Two copies of the
// 4-PE sheet prove the check can fail: with its first wire removed KiCad
// must find the pin left unconnected, and with one embedded symbol's pin
// lengthened it must find the symbol differing from its library's.
func TestKiCadERC(t *testing.T) {
	cli := kicadCLI(t)
	cfg := kicadConfig(t, cli)
	var bases []string
	for _, n := range hw.Sizes {
		bases = append(bases, kicad.Base(n))
	}
	for _, base := range append(bases, kicad.PiBase) {
		vs := erc(t, cli, cfg, projectCopy(t, base, ".kicad_sch", committed(t, base, ".kicad_sch")))
		if bad := unexpected(base, vs); len(bad) > 0 {
			t.Errorf("%s: KiCad's ERC finds %d unexpected violations:\n%s", base, len(bad), summary(bad))
		}
	}

	base := kicad.Base(4)
	src := string(committed(t, base, ".kicad_sch"))
	wire := regexp.MustCompile(`(?m)^\s*\(wire .*\n`).FindString(src)
	if wire == "" {
		t.Fatal("no wire in the 4-PE schematic")
	}
	vs := unexpected(base, erc(t, cli, cfg, projectCopy(t, base, ".kicad_sch", []byte(strings.Replace(src, wire, "", 1)))))
	if !slices.ContainsFunc(vs, func(v ercViolation) bool { return v.Severity == "error" && v.Type == "pin_not_connected" }) {
		t.Errorf("4 PEs with a wire removed: KiCad's ERC finds no unconnected pin:\n%s", summary(vs))
	}
	lengthened := strings.Replace(src, "(length 3.81)", "(length 5.08)", 1)
	vs = unexpected(base, erc(t, cli, cfg, projectCopy(t, base, ".kicad_sch", []byte(lengthened))))
	if !slices.ContainsFunc(vs, func(v ercViolation) bool { return v.Type == "lib_symbol_mismatch" }) {
		t.Errorf("4 PEs with an embedded symbol changed: KiCad's ERC does not compare it with its library:\n%s", summary(vs))
	}
}

// summary lists violations, at most five of each rule, with each rule's count.
func summary(vs []ercViolation) string {
	byType := map[string][]ercViolation{}
	for _, v := range vs {
		byType[v.Type] = append(byType[v.Type], v)
	}
	var s []string
	for _, typ := range slices.Sorted(maps.Keys(byType)) {
		s = append(s, fmt.Sprintf("%d × %s", len(byType[typ]), typ))
		for _, v := range byType[typ][:min(5, len(byType[typ]))] {
			s = append(s, "  "+v.String())
		}
	}
	return strings.Join(s, "\n")
}
