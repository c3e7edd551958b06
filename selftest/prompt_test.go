package selftest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// singlePort runs a single-PC selftest on PE 0's port of an emulated board
// whose other cables are unplugged, as a real port alone on its board.
func singlePort(t *testing.T, ask func(int, string) (lpt.LED, error)) *Report {
	t.Helper()
	b, err := emu.New(4)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k < 4; k++ {
		b.Inject(emu.Fault{PE: k, Kind: emu.Unplugged})
	}
	port, err := b.Port(0)
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	rep, err := Run(context.Background(), Config{Port: port, Backend: "emulated port", PEs: 4, AskLED: ask, LatencyOps: 100})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// ledNotCheckable reports whether the report lists D4 and D5 as not checkable.
func ledNotCheckable(r *Report) bool {
	n := 0
	for _, c := range r.Checks {
		if c.Status == StatusNotCheckable && (c.Line == "D4" || c.Line == "D5") {
			n++
		}
	}
	return n == 2
}

// TestPromptAnswered: a person who answers the LED questions makes the LED
// lines checked, and a wrong answer fails them.
func TestPromptAnswered(t *testing.T) {
	var out bytes.Buffer
	rep := singlePort(t, Prompt(strings.NewReader("d\ngreen\nnonsense\nR\no\n"), &out, time.Minute))
	if !rep.Pass || ledNotCheckable(rep) || len(rep.Notes) != 0 {
		t.Errorf("right answers: pass %v, LED lines not checkable %v, notes %q", rep.Pass, ledNotCheckable(rep), rep.Notes)
	}
	if q := strings.Count(out.String(), "Which colour is the LED for PE 0"); q != 5 {
		t.Errorf("asked %d times, want 5 (4 colours, one repeated after a word that is no colour):\n%s", q, out.String())
	}
	rep = singlePort(t, Prompt(strings.NewReader("d\nr\nr\no\n"), io.Discard, time.Minute))
	if rep.Pass || !slices.ContainsFunc(rep.Failed(), func(c Check) bool { return strings.Contains(c.Name, "LED colours") }) {
		t.Errorf("a wrong answer (red for green) must fail the LED check; failed: %v", rep.Failed())
	}
}

// TestPromptUnanswered: a console that ends (EOF) or where nobody answers
// in time skips the LED lines with a note instead of failing the selftest
// (it failed with "wiring probe … EOF").
func TestPromptUnanswered(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	for name, ask := range map[string]func(int, string) (lpt.LED, error){
		"EOF":                  Prompt(strings.NewReader(""), io.Discard, time.Minute),
		"timeout":              Prompt(pr, io.Discard, 20*time.Millisecond),
		"EOF after one answer": Prompt(strings.NewReader("d\n"), io.Discard, time.Minute),
	} {
		rep := singlePort(t, ask)
		if !rep.Pass || !ledNotCheckable(rep) || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "LED lines not checked") {
			t.Errorf("%s: pass %v, LED lines not checkable %v, notes %q; failed %v", name, rep.Pass, ledNotCheckable(rep), rep.Notes, rep.Failed())
		}
	}
}

// TestPromptGivesUpOnce: once nobody answered, later questions get no
// answer either, even one typed late: the probe has dropped the LED step.
func TestPromptGivesUpOnce(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ask := Prompt(pr, io.Discard, 10*time.Millisecond)
	if _, err := ask(0, "q?"); !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("no answer: %v, want ErrNoAnswer", err)
	}
	go io.WriteString(pw, "g\n")
	if c, err := ask(1, "q?"); !errors.Is(err, ErrNoAnswer) {
		t.Errorf("after giving up, a second question got %v, %v; want ErrNoAnswer", c, err)
	}
}
