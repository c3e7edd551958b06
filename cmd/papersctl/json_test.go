package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/hil"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

func TestDemoJSON(t *testing.T) {
	stdout, stderr, status := runCLI("demo", "--pes", "3", "--bench", "10", "--json")
	var rs []demoResult
	if status != 0 || json.Unmarshal([]byte(stdout), &rs) != nil {
		t.Fatalf("exit %d, stderr %q, stdout %q", status, stderr, stdout)
	}
	if len(rs) != 3 {
		t.Fatalf("%d results, want one per PE", len(rs))
	}
	for k, r := range rs {
		if r.PE != k || r.PEs != 3 || r.Sum != uint64(demoValue(0))+uint64(demoValue(1))+uint64(demoValue(2)) || r.Barriers != 10 || r.BarrierNs <= 0 {
			t.Errorf("PE %d: %+v", k, r)
		}
	}
}

func TestKicadJSON(t *testing.T) {
	testenv.SlowUnderRace(t, "routing the boards")
	if err := kicad.CheckLibraries(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	stdout, stderr, status := runCLI("kicad", "--out", dir, "--json")
	var r struct {
		Dir   string   `json:"dir"`
		Files []string `json:"files"`
	}
	if status != 0 || json.Unmarshal([]byte(stdout), &r) != nil || r.Dir != dir || len(r.Files) == 0 {
		t.Fatalf("exit %d, stderr %q, stdout %.200q", status, stderr, stdout)
	}
	for _, f := range r.Files {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("listed file %s: %v", f, err)
		}
	}
}

// Without KiCad's symbol libraries the kicad command writes nothing and
// says which packages to install.
func TestKicadNoLibraries(t *testing.T) {
	t.Setenv(kicad.EnvSymbolDir, t.TempDir())
	dir := filepath.Join(t.TempDir(), "out")
	_, stderr, status := runCLI("kicad", "--out", dir)
	if status == 0 || !strings.Contains(stderr, "kicad-symbols kicad-footprints") {
		t.Errorf("exit %d, stderr %q: want a failure naming kicad-symbols and kicad-footprints", status, stderr)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: %v, want nothing written", dir, err)
	}
}

func TestHilJSON(t *testing.T) {
	res := &hil.Result{Wall: 3 * time.Second, Machines: []hil.Machine{
		{PE: 0, Exit: 0, Wall: 2 * time.Second, Ioctls: 100, PerOp: 34 * time.Microsecond},
		{PE: 1, Exit: -1, Err: errors.New("hil: machine 1 did not power off")},
	}}
	b, err := json.Marshal(hilJSON(res))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		OK       bool         `json:"ok"`
		WallMs   float64      `json:"wall_ms"`
		Machines []hilMachine `json:"machines"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := []hilMachine{{PE: 0, WallMs: 2000, PortOps: 100, PerOpUs: 34}, {PE: 1, Exit: -1, Error: "hil: machine 1 did not power off"}}
	if got.OK || got.WallMs != 3000 || !slices.Equal(got.Machines, want) {
		t.Errorf("hil --json: %s", b)
	}
}
