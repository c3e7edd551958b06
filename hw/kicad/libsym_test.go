package kicad_test

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

var updateSymbols = flag.Bool("update-symbols", false, "copy hw/kicad/symbols afresh from the installed KiCad libraries")

// installedLibrary reads one of KiCad's installed symbol libraries.
func installedLibrary(t *testing.T, lib string) []byte {
	t.Helper()
	path := filepath.Join(symbolDir, lib+".kicad_sym")
	src, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		testenv.Missing(t, "%s not found: install Debian's kicad-symbols package (apt-get install -t bookworm-backports kicad-symbols) to check pinouts and symbols against KiCad's library", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// symbolBlock is one top-level symbol of a KiCad 9 library file, as its
// text: from its "(symbol" line to its closing parenthesis, tab-indented
// one level as the library writes it.
func symbolBlock(lib []byte, name string) string {
	re := regexp.MustCompile(`(?ms)^\t\(symbol ` + regexp.QuoteMeta(`"`+name+`"`) + `\n.*?^\t\)\n`)
	return string(re.Find(lib))
}

// TestCopiedSymbolsAreKiCads: every symbol in hw/kicad/symbols is, byte
// for byte, the installed KiCad library's, and the copies hold every
// symbol a board part names (and what those extend), no more. With
// -update-symbols it copies them afresh.
func TestCopiedSymbolsAreKiCads(t *testing.T) {
	need := map[string][]string{"power": {"GND", "VCC", "PWR_FLAG"}}
	for _, p := range append(slices.Clone(hw.Parts), hw.Passives...) {
		lib, name, _ := strings.Cut(p.Symbol, ":")
		need[lib] = append(need[lib], name)
	}
	for lib, names := range need {
		src := installedLibrary(t, lib)
		root, err := kicad.ParseExpr(string(src))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range root.Children("symbol") {
			if slices.Contains(names, s.Arg(0)) {
				if e := s.Child("extends"); e != nil && !slices.Contains(names, e.Arg(0)) {
					names = append(names, e.Arg(0))
				}
			}
		}
		slices.Sort(names)
		names = slices.Compact(names)
		text := string(src[:strings.Index(string(src), "\n\t(symbol ")+1])
		for _, n := range names {
			b := symbolBlock(src, n)
			if b == "" {
				t.Fatalf("KiCad's %s library has no symbol %s", lib, n)
			}
			text += b
		}
		text += ")\n"
		if *updateSymbols {
			if err := os.WriteFile(filepath.Join("symbols", lib+".kicad_sym"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got := string(kicad.LibraryFiles()[lib]); got != text {
			t.Errorf("hw/kicad/symbols/%s.kicad_sym is not the installed library's %v: run `go test ./hw/kicad -run TestCopiedSymbolsAreKiCads -update-symbols` and regenerate", lib, names)
		}
	}
	if got := len(kicad.LibraryFiles()); got != len(need) && !*updateSymbols {
		t.Errorf("hw/kicad/symbols holds %d libraries, the parts name %d", got, len(need))
	}
}

// TestEmbeddedSymbolsAreTheLibrarys reads the lib_symbols of every
// committed schematic: each is, item for item, the installed library's
// symbol as KiCad embeds it (flattened if it extends another), so KiCad's
// "Update symbols from library" has nothing to change.
func TestEmbeddedSymbolsAreTheLibrarys(t *testing.T) {
	files := map[string][]byte{}
	for lib := range kicad.LibraryFiles() {
		files[lib] = installedLibrary(t, lib)
	}
	installed, err := kicad.ParseLibrary(files)
	if err != nil {
		t.Fatal(err)
	}
	var bases []string
	for _, n := range hw.Sizes {
		bases = append(bases, kicad.Base(n))
	}
	for _, base := range append(bases, kicad.PiBase) {
		root, err := kicad.ParseExpr(string(committed(t, base, ".kicad_sch")))
		if err != nil {
			t.Fatal(err)
		}
		syms := root.Child("lib_symbols").Children("symbol")
		if len(syms) == 0 {
			t.Errorf("%s embeds no library symbols", base)
		}
		for _, got := range syms {
			want, err := installed.Embedded(got.Arg(0))
			if err != nil {
				t.Errorf("%s: %v", base, err)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the embedded %s differs from KiCad's library", base, got.Arg(0))
			}
		}
	}
}
