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
	// internal/: what the layers share at the bottom, importing nothing of
	// the module (runtime primitives, test kits, the VM harness).
	"internal/word": 0, "internal/axis": 0, "internal/stop": 0, "internal/testenv": 0, "internal/leakcheck": 0, "internal/qemu": 0,
	"field": 0, "peset": 0, "baseline": 0, "internal/mpienv": 0, "internal/hosts": 1,
	"lpt": 1, "lpt/lpttest": 2, "lpt/linuxlpt": 2, "lpt/gpiomap": 2, "lpt/periphlpt": 3, "lpt/backend": 4,
	"hw": 3, "hw/kicad/route": 4, "hw/kicad": 5,
	"emu/netlist": 5, "emu/vcd": 5, "emu": 6, "emu/timed": 6, "emu/ppdevfs": 7,
	"papers": 5, "internal/pereport": 6, "internal/faulttrial": 7, "am/internal/queue": 1, "am": 6, "strata": 7, "splitc": 7, "am/tcpnet": 7, "am/shmnet": 7,
	"substrate": 6, "spmd/port": 8, "spmd/shm": 8, "mpi": 8,
	"emulate": 7, "spmd": 9, "conformance": 8, "conformance/dataconf": 8, "selftest": 9, "launch": 10, "timing": 9,
	"hil":           10,
	"examples/spmd": 11, "examples/hello": 11, "examples/radixsort": 11, "examples/matmul": 11,
	// papersctl's own packages, which nothing else may import.
	"cmd/papersctl/internal/term": 0, "cmd/papersctl/internal/progress": 1, "cmd/papersctl/internal/measure": 6,
	"cmd/papersctl/internal/databench": 8, "cmd/papersctl/internal/base": 1, "cmd/papersctl/internal/base/basetest": 2,
	"cmd/papersctl/internal/boardflag": 7,
	// one package a command, as in the go command's source; package main
	// only wires them.
	"cmd/papersctl/internal/benchcmd": 11, "cmd/papersctl/internal/democmd": 11, "cmd/papersctl/internal/emucmd": 11,
	"cmd/papersctl/internal/hilcmd": 11, "cmd/papersctl/internal/kicadcmd": 11, "cmd/papersctl/internal/probecmd": 11,
	"cmd/papersctl/internal/runcmd": 11, "cmd/papersctl/internal/selftestcmd": 11, "cmd/papersctl/internal/timingcmd": 11,
	"cmd/papersctl/internal/versioncmd": 11, "cmd/papersctl": 12,
}

// pendingLoops are imports running back up a floor that are known and
// being removed: "folder -> folder". An entry that no longer runs back up
// fails the test, so that it is deleted with the loop.
var pendingLoops = map[string]bool{}

// builds are the build configurations the layering holds in: the plain
// build and the MPI backend's, on Open MPI and on MPICH.
var builds = [][]string{nil, {"-tags", "mpi"}, {"-tags", "mpi,mpich"}}

// protocol packages must not depend on the board (hw) or its emulator (emu),
// even indirectly: a program for real ports must not link the emulator.
var protocol = []string{"papers", "am", "am/tcpnet", "am/shmnet", "strata", "splitc"}

func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// imports lists the module's packages (tests/ aside) with the module's
// packages each imports, in the build that args configure (test files
// aside: a test may use a kit of a higher layer).
func imports(t *testing.T, args []string) map[string][]string {
	t.Helper()
	m := map[string][]string{}
	for _, line := range goList(t, append(args, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../...")...) {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok || strings.HasPrefix(pkg, "tests") {
			continue
		}
		m[pkg] = []string{}
		for _, imp := range fields[1:] {
			if dep, ok := strings.CutPrefix(imp, module); ok {
				m[pkg] = append(m[pkg], dep)
			}
		}
	}
	return m
}

func TestLayering(t *testing.T) {
	for _, args := range builds {
		for pkg, deps := range imports(t, args) {
			rank, known := layer[pkg]
			if !known {
				t.Errorf("package %s is not in the layer table of tests/layers_test.go: place it", pkg)
				continue
			}
			for _, dep := range deps {
				if r, known := layer[dep]; known && r >= rank {
					t.Errorf("%v: %s (layer %d) imports %s (layer %d): lower layers never import higher ones", args, pkg, rank, dep, r)
				}
			}
		}
	}
}

// folder is a package's floor of the house: its top directory, with
// cmd/papersctl and the examples each a floor of their own.
func folder(pkg string) string {
	parts := strings.Split(pkg, "/")
	if parts[0] == "cmd" || parts[0] == "examples" {
		return strings.Join(parts[:min(2, len(parts))], "/")
	}
	return parts[0]
}

// TestFoldersDoNotLoop: the layers hold between folders too. A folder is a
// floor, as low as its lowest package's layer; if a package of folder A
// imports one of folder B, no package of B imports (directly or not) one
// of A. Otherwise, of the imports between them, the one from the lower
// floor to the higher runs back up, and the folder is a drawer of layers
// rather than one of them.
func TestFoldersDoNotLoop(t *testing.T) {
	for _, args := range builds {
		edges := map[string]map[string]string{} // folder → folder → an import that makes the edge
		for pkg, deps := range imports(t, args) {
			for _, dep := range deps {
				a, b := folder(pkg), folder(dep)
				if a == b {
					continue
				}
				if edges[a] == nil {
					edges[a] = map[string]string{}
				}
				edges[a][b] = pkg + " imports " + dep
			}
		}
		reaches := func(from, to string) bool {
			seen, todo := map[string]bool{from: true}, []string{from}
			for len(todo) > 0 {
				f := todo[len(todo)-1]
				todo = todo[:len(todo)-1]
				for g := range edges[f] {
					if g == to {
						return true
					}
					if !seen[g] {
						seen[g] = true
						todo = append(todo, g)
					}
				}
			}
			return false
		}
		// Of the imports that close a loop, the one that runs back up goes
		// to a folder whose lowest layer is above the importer's.
		floor := map[string]int{}
		for pkg, rank := range layer {
			if f, ok := floor[folder(pkg)]; !ok || rank < f {
				floor[folder(pkg)] = rank
			}
		}
		up := map[string]bool{}
		for a, bs := range edges {
			for b, why := range bs {
				if floor[a] > floor[b] || !reaches(b, a) {
					continue
				}
				up[a+" -> "+b] = true
				if !pendingLoops[a+" -> "+b] {
					t.Errorf("%v: %s runs back up from floor %s to %s, which imports %s: move the package to the folder of its layer", args, why, a, b, a)
				}
			}
		}
		for l := range pendingLoops {
			if !up[l] {
				t.Errorf("%v: %s no longer runs back up: delete it from pendingLoops", args, l)
			}
		}
	}
}

// TestShippedCodeStaysOut: papersctl does not link package testing, and
// the examples, which users copy, import no internal package.
func TestShippedCodeStaysOut(t *testing.T) {
	for _, args := range builds {
		for _, dep := range goList(t, append(args, "-deps", "../cmd/papersctl")...) {
			if dep == "testing" {
				t.Errorf("%v: papersctl links package testing", args)
			}
		}
		for pkg, deps := range imports(t, args) {
			if !strings.HasPrefix(pkg, "examples/") {
				continue
			}
			for _, dep := range deps {
				if strings.HasPrefix(dep, "internal/") || strings.Contains(dep, "/internal/") {
					t.Errorf("%v: %s imports %s: an example imports public packages only", args, pkg, dep)
				}
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
