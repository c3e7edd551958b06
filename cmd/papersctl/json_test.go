package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

func TestKicadJSON(t *testing.T) {
	testenv.SlowUnderRace(t, "routing the boards")
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
