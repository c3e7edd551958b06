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

func init() {
	badInputs["timing"] = []badInput{
		{[]string{"stray"}, []string{`unexpected argument "stray"`}},
		{[]string{"--pes", "1"}, []string{"--pes 1: need 2 to 32"}},
		{[]string{"--pes", "40"}, []string{"--pes 40: need 2 to 32"}},
		{[]string{"--trials", "0"}, []string{"--trials 0: need 1 to 1000000"}},
		{[]string{"--nands", "0"}, []string{"--nands 0: need 1 to 10000"}},
		{[]string{"--cable", "x"}, []string{`--cable: "x" is not a length in metres`}},
		{[]string{"--cable", "5-2"}, []string{`--cable: "5-2": want 0 <= MIN <= MAX metres`}},
		{[]string{"--bus", "isa2"}, []string{`--bus: timed: no port timing "isa2": use isa, pci, pcie`}},
		{[]string{"--delays", "fast"}, []string{`--delays: timed: delay corner "fast"`}},
		{[]string{"--variant", "nope"}, []string{`--variant: timing: no variant "nope"`}},
		{[]string{"--speed", "0.9"}, []string{"--speed 0.9: need a number from 0 to 0.5"}},
		{[]string{"--skew", "-1ns"}, []string{"--skew -1ns: need a duration of 0"}},
		{[]string{"--stall-prob", "2"}, []string{"--stall-prob 2: need a number from 0 to 1"}},
		{[]string{"--op-time", "0s"}, []string{"--op-time 0s: need a positive duration"}},
		{[]string{"--control-lines", "tri-state"}, []string{"--control-lines tri-state: want one of open-collector, push-pull"}},
		{[]string{"--margin-buses", "isa,usb"}, []string{`--margin-buses: timed: no port timing "usb"`}},
		{[]string{"--margin-trials", "0"}, []string{"--margin-trials 0: need 1 to 100000"}},
		{[]string{"--margins=false", "--margin-trials", "5"}, []string{"--margins=false turns off"}},
		{[]string{"--trial", "3"}, []string{"--trial 3: picks the trial --vcd or --svg records"}},
		{[]string{"--vcd", "{dir}/x.vcd", "--variant", "nand"}, []string{"--vcd and --svg record one variant"}},
		{[]string{"--vcd", "{dir}/x.vcd", "--trials", "10"}, []string{"--trials 10: --vcd and --svg record one trial"}},
		{[]string{"--vcd", "{dir}/no/such/x.vcd", "--variant", "nand/shipped"}, []string{"directory {dir}/no/such does not exist"}},
		{[]string{"--svg", "{dir}/x.svg", "--variant", "barrier"}, []string{"--svg draws a NAND's race"}},
		{[]string{"--bus", "pcie", "--op-time", "100ns"}, []string{"stalls up to 4µs are more than 25 of the fastest port operations"}},
	}
	badInputs["selftest"] = append(badInputs["selftest"], badInput{[]string{"--vcd", "{dir}/s.vcd", "--port", "0x378"}, []string{"--vcd records the emulator's nets: drop --vcd, or drop --port"}})
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
	out, err := exec.Command(bin, "timing", "--json", "--trials", "40", "--margin-trials", "5", "--margin-buses", "isa",
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

// TestSelftestVCD records a selftest as a waveform. Recording writes at
// every port operation, so the wait is raised: a loaded machine must not
// fail a healthy check.
func TestSelftestVCD(t *testing.T) {
	bin := build(t)
	path := filepath.Join(t.TempDir(), "s.vcd")
	out, err := exec.Command(bin, "selftest", "--pes", "2", "--timeout", "10s", "--vcd", path).CombinedOutput()
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
}
