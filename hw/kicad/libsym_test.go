package kicad_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// installedLibrary reads one of KiCad's installed symbol libraries.
func installedLibrary(t *testing.T, lib string) []byte {
	t.Helper()
	path := filepath.Join(kicad.SymbolDir(), lib+".kicad_sym")
	src, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		testenv.Missing(t, "%s not found: install Debian's kicad-symbols package (apt-get install -t bookworm-backports kicad-symbols) to check pinouts and symbols against KiCad's library", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// needLibraries skips the test without KiCad's symbol libraries (fails it
// in CI): the generator reads them.
func needLibraries(t *testing.T) {
	t.Helper()
	if err := kicad.CheckLibraries(); err != nil {
		testenv.Missing(t, "%v", err)
	}
}

// TestNoLibraryCopies: the repository holds no file of KiCad's libraries;
// the generator reads the installed ones.
func TestNoLibraryCopies(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); ext == ".kicad_sym" || ext == ".kicad_mod" {
			t.Errorf("%s is a KiCad library file: the generator reads KiCad's installed libraries, delete it", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Without the libraries the generator stops before any work, naming the
// packages; with them, it reads each symbol the boards use and what it
// extends, each as the whole library file parses it.
func TestReadLibrary(t *testing.T) {
	_, err := kicad.ReadLibrary(t.TempDir(), kicad.BoardSymbols())
	if !errors.Is(err, kicad.ErrNoLibraries) || !strings.Contains(err.Error(), "kicad-symbols") {
		t.Errorf("no libraries: %v, want ErrNoLibraries naming kicad-symbols", err)
	}
	t.Setenv(kicad.EnvSymbolDir, t.TempDir())
	if err := kicad.CheckLibraries(); !errors.Is(err, kicad.ErrNoLibraries) {
		t.Errorf("CheckLibraries with %s empty: %v, want ErrNoLibraries", kicad.EnvSymbolDir, err)
	}
	t.Setenv(kicad.EnvSymbolDir, "")
	needLibraries(t)
	got, err := kicad.ReadLibrary(kicad.SymbolDir(), kicad.BoardSymbols())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, id := range kicad.BoardSymbols() {
		lib, _, _ := strings.Cut(id, ":")
		files[lib] = installedLibrary(t, lib)
	}
	whole, err := kicad.ParseLibrary(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range kicad.BoardSymbols() {
		if got[id] == nil || !reflect.DeepEqual(got[id], whole[id]) {
			t.Errorf("%s read is not the library's", id)
		}
		if e := whole[id].Child("extends"); e != nil {
			lib, _, _ := strings.Cut(id, ":")
			if p := lib + ":" + e.Arg(0); !reflect.DeepEqual(got[p], whole[p]) {
				t.Errorf("%s extends %s, read as not the library's", id, p)
			}
		}
	}
}

// TestEmbeddedSymbolsAreTheLibrarys reads the lib_symbols of every
// committed schematic: each is, item for item, the installed library's
// symbol as KiCad embeds it (flattened if it extends another), so KiCad's
// "Update symbols from library" has nothing to change.
func TestEmbeddedSymbolsAreTheLibrarys(t *testing.T) {
	files := map[string][]byte{}
	for _, id := range kicad.BoardSymbols() {
		lib, _, _ := strings.Cut(id, ":")
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

// Without the footprint libraries the generator stops before any work,
// naming the package and the variable that names their folder; with them,
// it reads every footprint the boards use.
func TestReadFootprints(t *testing.T) {
	_, err := kicad.ReadFootprints(t.TempDir(), kicad.BoardFootprints())
	if !errors.Is(err, kicad.ErrNoLibraries) || !strings.Contains(err.Error(), "kicad-footprints") || !strings.Contains(err.Error(), kicad.EnvFootprintDir) {
		t.Errorf("no footprints: %v, want ErrNoLibraries naming kicad-footprints and %s", err, kicad.EnvFootprintDir)
	}
	needLibraries(t)
	t.Setenv(kicad.EnvFootprintDir, t.TempDir())
	if err := kicad.CheckLibraries(); !errors.Is(err, kicad.ErrNoLibraries) {
		t.Errorf("CheckLibraries with %s empty: %v, want ErrNoLibraries", kicad.EnvFootprintDir, err)
	}
	t.Setenv(kicad.EnvFootprintDir, "")
	fps, err := kicad.ReadFootprints(kicad.FootprintDir(), kicad.BoardFootprints())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range kicad.BoardFootprints() {
		if fps[id] == nil || len(fps[id].Children("pad")) == 0 {
			t.Errorf("%s: not read, or without pads", id)
		}
	}
}
