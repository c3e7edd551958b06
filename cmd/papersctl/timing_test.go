package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu/vcd"
)

func TestTimingBadFlags(t *testing.T) {
	vcdFile := filepath.Join(t.TempDir(), "x.vcd")
	for _, args := range [][]string{
		{"stray"},
		{"--pes", "1"},
		{"--pes", "40"},
		{"--trials", "0"},
		{"--nands", "0"},
		{"--cable", "x"},
		{"--cable", "5-2"},
		{"--cable", "-1"},
		{"--port", "isa2"},
		{"--delays", "fast"},
		{"--variant", "nope"},
		{"--speed", "0.9"},
		{"--skew", "-1ns"},
		{"--stall-prob", "2"},
		{"--op-time", "0s"},
		{"--control-lines", "tri-state"},
		{"--margin-ports", "isa,usb"},
		{"--margin-trials", "0"},
		{"--margins=false", "--margin-trials", "5"},
		{"--trial", "3"},
		{"--vcd", vcdFile, "--variant", "nand"},
		{"--vcd", vcdFile, "--trials", "10"},
		{"--vcd", vcdFile, "--variant", "nand/shipped", "--trial", "-1"},
		{"--svg", vcdFile, "--variant", "barrier"},
		{"--port", "pcie", "--op-time", "100ns"}, // stalls far longer than 25 operations
	} {
		if code := runTiming(args); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if _, err := os.Stat(vcdFile); err == nil {
		t.Error("a refused command wrote its --vcd file")
	}
	if code := runTiming([]string{"-h"}); code != 0 {
		t.Errorf("-h: exit %d, want 0", code)
	}
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// TestTimingCommand runs papersctl timing for its JSON rows, and records a
// trial as a waveform and a picture.
func TestTimingCommand(t *testing.T) {
	bin := build(t)
	out, err := exec.Command(bin, "timing", "--json", "--trials", "40", "--margin-trials", "5", "--margin-ports", "isa",
		"--variant", "nand/no-resample,nand/shipped").Output()
	if code := exitCode(t, err); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("not a JSON list: %v\n%s", err, out)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows for 2 variants", len(rows))
	}
	for _, key := range []string{"op", "variant", "ops", "trials", "failures", "margins"} {
		for _, r := range rows {
			if _, ok := r[key]; !ok {
				t.Errorf("row %v has no %q", r["variant"], key)
			}
		}
	}
	if rows[0]["variant"] != "no-resample" || rows[0]["failures"].(float64) == 0 || rows[1]["failures"].(float64) != 0 || rows[1]["trials"].(float64) != 40 {
		t.Errorf("rows %v: want no-resample failing and shipped not, 40 trials each", rows)
	}

	dir := t.TempDir()
	vcdPath, svgPath := filepath.Join(dir, "t.vcd"), filepath.Join(dir, "t.svg")
	out, err = exec.Command(bin, "timing", "--vcd", vcdPath, "--svg", svgPath, "--variant", "nand/no-resample", "--trial", "1").CombinedOutput()
	if code := exitCode(t, err); code != 0 || !strings.Contains(string(out), "trial 1 of nand/no-resample") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	f, err := os.Open(vcdPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	file, err := vcd.Parse(f)
	if err != nil || file.Signal("board.RDYQ") == nil || file.Signal("pc.PE3.Busy") == nil {
		t.Fatalf("the VCD: %v, or it lacks board.RDYQ and pc.PE3.Busy", err)
	}
	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(strings.NewReader(string(svg)))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("the SVG is not XML: %v", err)
		}
	}
}

// TestSelftestVCD records a selftest as a waveform.
func TestSelftestVCD(t *testing.T) {
	bin := build(t)
	path := filepath.Join(t.TempDir(), "s.vcd")
	out, err := exec.Command(bin, "selftest", "--pes", "2", "--vcd", path).CombinedOutput()
	if code := exitCode(t, err); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	file, err := vcd.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"board.RDYQ", "board.nINTQ", "pc.PE1.status", "pc.PE0.nSelectIn"} {
		if sig := file.Signal(s); sig == nil || len(sig.Changes) < 2 {
			t.Errorf("%s: %v, want a signal that changes", s, sig)
		}
	}
	if file.End < 20000 { // the latency check alone makes 20000 operations
		t.Errorf("the recording ends at step %d", file.End)
	}
	if code := runSelftest([]string{"--vcd", path, "--port", "0x378"}); code != 2 {
		t.Errorf("--vcd with a real port: exit %d, want 2", code)
	}
}
