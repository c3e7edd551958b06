package tests

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/ttlpapers/ttlpapers/"

// layer ranks each package of the module: a package may import only packages
// of a lower rank (the README's package map, bottom up). A package missing
// from the table fails the test, so a new one is placed on purpose.
var layer = map[string]int{
	"field": 0, "internal/testenv": 0, "internal/measure": 0, "internal/stop": 0, "internal/leakcheck": 0, "internal/term": 0, "internal/progress": 1, "internal/axis": 0, "internal/anchors": 0, "internal/word": 0, "internal/conformance": 6,
	"lpt": 1, "lpt/lpttest": 2, "lpt/linuxlpt": 2, "lpt/gpiomap": 2, "lpt/periphlpt": 3, "lpt/backend": 4,
	"hw": 3, "hw/kicad/route": 4, "hw/kicad": 5,
	"emu/netlist": 5, "emu/vcd": 5, "emu": 6, "emu/timed": 6, "emu/ppdevfs": 7,
	"papers": 5, "am": 6, "strata": 7, "splitc": 7,
	"spmd/substrate": 6, "spmd/port": 7, "spmd/shm": 7, "mpi": 7,
	"emulate": 7, "spmd": 8, "internal/dataconf": 8, "selftest": 9, "launch": 9, "timing": 9,
	"internal/qemu": 9, "hil": 10, "internal/databench": 10,
	"examples/spmd": 11, "examples/hello": 11, "examples/radixsort": 11, "examples/matmul": 11, "cmd/papersctl": 11,
}

// protocol packages must not depend on the board (hw) or its emulator (emu),
// even indirectly: a program for real ports must not link the emulator.
var protocol = []string{"papers", "am", "strata", "splitc"}

func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func TestLayering(t *testing.T) {
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../...") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok || strings.HasPrefix(pkg, "tests") {
			continue
		}
		rank, known := layer[pkg]
		if !known {
			t.Errorf("package %s is not in the layer table of tests/layers_test.go: place it", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if r, known := layer[dep]; known && r >= rank {
				t.Errorf("%s (layer %d) imports %s (layer %d): lower layers never import higher ones", pkg, rank, dep, r)
			}
		}
	}
}

func TestProtocolFreeOfEmulator(t *testing.T) {
	for _, pkg := range protocol {
		for _, dep := range goList(t, "-deps", "../"+pkg) {
			if d, ok := strings.CutPrefix(dep, module); ok && (d == "emu" || strings.HasPrefix(d, "emu/") || d == "hw" || strings.HasPrefix(d, "hw/")) {
				t.Errorf("%s depends on %s: the protocol stands on lpt alone (emulated runs live in package emulate)", pkg, d)
			}
		}
	}
}

// TestBoardFreeOfGPIOLibrary keeps periph.io out of the board's data, its
// generator and the emulator: the Pi adapter takes its wiring from
// lpt/gpiomap, which needs no GPIO library.
func TestBoardFreeOfGPIOLibrary(t *testing.T) {
	for _, pkg := range []string{"hw", "hw/kicad", "emu", "papers"} {
		for _, dep := range goList(t, "-deps", "../"+pkg) {
			if strings.HasPrefix(dep, "periph.io/") {
				t.Errorf("%s depends on %s: only the GPIO driver (lpt/periphlpt) and what opens ports link periph.io", pkg, dep)
			}
		}
	}
}
