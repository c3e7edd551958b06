package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw/kicad"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

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
