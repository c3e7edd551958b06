package vcd

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sample writes a small file with every kind of variable the emulator
// uses: escaped names, an alias, a vector, an event and an unknown value.
func sample(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "1ns", "test")
	if err != nil {
		t.Fatal(err)
	}
	w.Scope("board")
	d6 := w.Wire("PE2.D6", 1)
	rdy := w.Wire("RDYQ", 1)
	w.Upscope()
	w.Scope("pc")
	w.Scope("PE2")
	w.Alias("D6", d6)
	st := w.Reg("status", 8)
	rd := w.Event("read")
	w.Upscope()
	w.Upscope()
	w.Begin(map[Var]Value{d6: Bool(true), st: X})
	w.Set(0, rdy, Bool(true))
	w.Set(15, d6, Bool(false))
	w.Set(15, d6, Bool(false)) // no change: not repeated
	w.Set(20, st, Bits(0x87))
	w.Fire(20, rd)
	w.Fire(40, rd)
	w.Set(40, rdy, Bool(false))
	if err := w.Close(50); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWriteParse writes a file and reads it back.
func TestWriteParse(t *testing.T) {
	data := sample(t)
	if strings.Count(string(data), "0!") != 1 {
		t.Errorf("an unchanged value was written again:\n%s", data)
	}
	f, err := Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if f.Timescale != time.Nanosecond || f.End != 50 {
		t.Errorf("timescale %v, end %d; want 1ns, 50", f.Timescale, f.End)
	}
	for _, c := range []struct {
		path string
		t    int64
		want string
	}{
		{"board.PE2.D6", 0, "1"}, {"board.PE2.D6", 14, "1"}, {"board.PE2.D6", 15, "0"},
		{"pc.PE2.D6", 15, "0"}, {"board.RDYQ", 39, "1"}, {"board.RDYQ", 40, "0"},
		{"pc.PE2.status", 0, "xxxxxxxx"}, {"pc.PE2.status", 25, "10000111"},
	} {
		s := f.Signal(c.path)
		if s == nil {
			t.Fatalf("no signal %s", c.path)
		}
		if got := s.At(c.t); got != c.want {
			t.Errorf("%s at %d = %q, want %q", c.path, c.t, got, c.want)
		}
	}
	if rd := f.Signal("pc.PE2.read"); rd.Type != "event" || len(rd.Changes) != 2 || rd.Changes[1].T != 40 {
		t.Errorf("read events %+v, want two, at 20 and 40", rd)
	}
	if v, ok := f.Signal("pc.PE2.status").Uint(20); !ok || v != 0x87 {
		t.Errorf("status at 20 = %#x, %v", v, ok)
	}
}

// standardExample is a file in the style of the example in IEEE 1364-2005
// §18.2.4.
const standardExample = `$date June 26, 1989 10:05:41 $end
$version VERILOG-SIMULATOR 1.0a $end
$timescale 1 ns $end
$scope module top $end
$scope module m1 $end
$var trireg 1 *@ net1 $end
$var trireg 1 *# net2 $end
$upscope $end
$scope task t1 $end
$var reg 32 (k accumulator[31:0] $end
$var integer 32 {2 index $end
$var real 64 r% level $end
$upscope $end
$upscope $end
$enddefinitions $end
$comment
  Note: $dumpvars was executed at time '#500'.
$end
#500
$dumpvars
bxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx (k
bx {2
r0 r%
z*@
0*#
$end
#505
0*@
1*#
b10 (k
r1.5e3 r%
#510
$dumpoff
x*@
bz (k
$end
#520
$dumpall
1*@
$end
`

// TestParseStandardExample reads a file in the style of the example in
// IEEE 1364-2005 §18.2.4: two-token timescale, bit selects, vectors
// shorter than their size, real values, x and z, $dumpall and $dumpoff.
func TestParseStandardExample(t *testing.T) {
	f, err := Parse(strings.NewReader(standardExample))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		t    int64
		want string
	}{
		{"top.m1.net1", 500, "z"}, {"top.m1.net1", 505, "0"}, {"top.m1.net1", 510, "x"}, {"top.m1.net1", 520, "1"},
		{"top.t1.accumulator", 505, strings.Repeat("0", 30) + "10"},
		{"top.t1.accumulator", 510, strings.Repeat("z", 32)},
		{"top.t1.index", 500, strings.Repeat("x", 32)},
		{"top.t1.level", 505, "1.5e3"},
	} {
		if got := f.Signal(c.path).At(c.t); got != c.want {
			t.Errorf("%s at %d = %q, want %q", c.path, c.t, got, c.want)
		}
	}
}

// TestParseRejects checks that files outside the grammar are refused, each
// with an error naming what is wrong.
func TestParseRejects(t *testing.T) {
	head := "$timescale 1ns $end $scope module m $end $var wire 1 ! a $end $var wire 4 # v $end $upscope $end $enddefinitions $end\n"
	for _, c := range []struct{ vcd, want string }{
		{"$timescale 1ns $end", "no $enddefinitions"},
		{"$timescale 1ns", "without $end"},
		{"$timescale 3ns $end $enddefinitions $end", "timescale"},
		{"$timescale 1ns $end $timescale 1ns $end $enddefinitions $end", "twice"},
		{"$bogus $end $enddefinitions $end", "not a declaration"},
		{"$scope room m $end $upscope $end $enddefinitions $end", "scope type"},
		{"$scope module m $end $enddefinitions $end", "still open"},
		{"$upscope $end $enddefinitions $end", "without an open scope"},
		{"$var wyre 1 ! a $end $enddefinitions $end", "unknown variable type"},
		{"$var wire 0 ! a $end $enddefinitions $end", "size"},
		{"$var wire 1 ! PE0.D6 $end $enddefinitions $end", "not a Verilog identifier"},
		{"$var wire 4 ! a [2:0] $end $enddefinitions $end", "spans 3 bits"},
		{"$var wire 1 ! a $end $var wire 2 ! b $end $enddefinitions $end", "alias"},
		{head + "1!", "before the first simulation time"},
		{head + "#5 #4", "must not go back"},
		{head + "#x", "not a decimal"},
		{head + "#0 1?", "undeclared identifier code"},
		{head + "#0 b10101 #", "wider"},
		{head + "#0 b102 #", "not a binary number"},
		{head + "#0 rfoo #", "not a real"},
		{head + "#0 q!", "neither a time"},
		{head + "#0 $var wire 1 % c $end", "after $enddefinitions"},
		{head + "#0 $dumpvars 1!", "without $end"},
	} {
		_, err := Parse(strings.NewReader(c.vcd))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one about %q", c.vcd, err, c.want)
		}
	}
}

// TestWriterRejects checks the writer's own errors.
func TestWriterRejects(t *testing.T) {
	if _, err := NewWriter(io.Discard, "2ns", ""); err == nil {
		t.Error("timescale 2ns accepted")
	}
	for name, f := range map[string]func(w *Writer){
		"time going back":     func(w *Writer) { v := w.Wire("a", 1); w.Begin(nil); w.Set(5, v, Bool(true)); w.Set(4, v, Bool(false)) },
		"space in a name":     func(w *Writer) { w.Wire("a b", 1) },
		"change before Begin": func(w *Writer) { v := w.Wire("a", 1); w.Set(0, v, Bool(true)) },
		"open scope":          func(w *Writer) { w.Scope("s"); w.Begin(nil) },
		"fire a wire":         func(w *Writer) { v := w.Wire("a", 1); w.Begin(nil); w.Fire(1, v) },
		"too wide":            func(w *Writer) { w.Wire("a", 65) },
	} {
		w, err := NewWriter(io.Discard, "1ns", "")
		if err != nil {
			t.Fatal(err)
		}
		f(w)
		if err := w.Close(0); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestGTKWaveReads converts a written file with GTKWave's own tools
// (vcd2fst, then fst2vcd back) and requires the same signals and values.
func TestGTKWaveReads(t *testing.T) {
	for _, tool := range []string{"vcd2fst", "fst2vcd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (GTKWave's tools): %v", tool, err)
		}
	}
	dir := t.TempDir()
	in, fst := filepath.Join(dir, "a.vcd"), filepath.Join(dir, "a.fst")
	if err := os.WriteFile(in, sample(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("vcd2fst", in, fst).CombinedOutput(); err != nil {
		t.Fatalf("vcd2fst: %v\n%s", err, out)
	}
	back, err := exec.Command("fst2vcd", fst).Output()
	if err != nil {
		t.Fatalf("fst2vcd: %v", err)
	}
	a, _ := Parse(bytes.NewReader(sample(t)))
	b, err := Parse(bytes.NewReader(back))
	if err != nil {
		t.Fatalf("GTKWave's VCD does not parse: %v\n%s", err, back)
	}
	for _, s := range a.Signals {
		o := b.Signal(s.Path)
		if o == nil {
			t.Errorf("GTKWave lost %s", s.Path)
			continue
		}
		for _, c := range s.Changes {
			if got := o.At(c.T); got != c.V {
				t.Errorf("%s at %d: GTKWave has %q, we wrote %q", s.Path, c.T, got, c.V)
			}
		}
	}
}

// TestSVG draws the sample and checks the picture: well-formed XML, a
// label per row, a mark, and one line per one-bit signal whose corners
// follow its changes.
func TestSVG(t *testing.T) {
	f, err := Parse(bytes.NewReader(sample(t)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	err = f.SVG(&buf, Plot{Title: "a <test>", From: 0, To: 50, Rows: []Row{
		{"D6 at the board", "board.PE2.D6"}, {"", "board.RDYQ"}, {"status", "pc.PE2.status"}, {"reads", "pc.PE2.read"},
	}, Marks: []Mark{{20, "read"}}})
	if err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
	}
	for _, want := range []string{"a &lt;test&gt;", "D6 at the board", "board.RDYQ", ">87<", "stroke-dasharray", "time (ns)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the picture lacks %q", want)
		}
	}
	// D6 falls at 15 of 0..50: its line has one step down, at 30 % of the
	// plot width (690 px from x=190).
	if !strings.Contains(svg, "L397.0 64.0 L397.0 80.0") {
		t.Errorf("no corner at x=397 (t=15) in:\n%s", svg)
	}
	if err := f.SVG(io.Discard, Plot{From: 0, To: 50, Rows: []Row{{"x", "board.nothing"}}}); err == nil {
		t.Error("a row of a missing signal accepted")
	}
	if err := f.SVG(io.Discard, Plot{From: 5, To: 5}); err == nil {
		t.Error("an empty window accepted")
	}
}
