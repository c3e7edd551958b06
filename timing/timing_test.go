package timing

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu/timed"
	"github.com/ttlpapers/ttlpapers/emu/vcd"
)

func variant(t *testing.T, name string) Variant {
	t.Helper()
	vs, err := VariantsNamed([]string{name})
	if err != nil || len(vs) != 1 {
		t.Fatalf("variant %s: %v %v", name, vs, err)
	}
	return vs[0]
}

// TestRaces is the claim of docs/timing.md, on a fixed seed under the
// default (realistic) parameters: every NAND variant with fewer than the
// seed's safeguards fails, each through the race it leaves open — race a
// (stale reads) without the resample, race b (data overwritten by a faster
// PE) without the trailing barrier — and the driver's NAND, barrier and
// interrupt never fail.
func TestRaces(t *testing.T) {
	p := DefaultParams()
	ctx := context.Background()
	for _, c := range []struct {
		name        string
		trials      int
		fails       bool
		stale, over bool
	}{
		{"nand/naive", 100, true, true, true},
		{"nand/no-resample", 100, true, true, false},
		{"nand/no-trailing-barrier", 100, true, false, true},
		{"nand/shipped", 300, false, false, false},
		{"nand/data-first", 300, false, false, false},
		{"barrier/shipped", 100, false, false, false},
		{"interrupt/shipped", 100, false, false, false},
	} {
		res, err := Run(ctx, p, []Variant{variant(t, c.name)}, c.trials, false)
		if err != nil {
			t.Fatal(err)
		}
		r := res[0]
		t.Logf("%s: %d of %d trials failed (%d stale, %d overwritten reads; first error %q)", c.name, r.Failures, r.Trials, r.Stale, r.Overwritten, r.FirstError)
		if r.Trials != c.trials || (r.Failures > 0) != c.fails || (r.Stale > 0) != c.stale || (r.Overwritten > 0) != c.over {
			t.Errorf("%s: %+v; want failures %v, stale reads %v, overwritten reads %v", c.name, r, c.fails, c.stale, c.over)
		}
	}
}

// TestTrialDeterministic runs a trial twice: the same results, read for
// read, and the same waveform, byte for byte.
func TestTrialDeterministic(t *testing.T) {
	p := DefaultParams()
	v := variant(t, "nand/naive")
	var a, b bytes.Buffer
	ra, err := Trial(p, v, 7, &a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Trial(p, v, 7, &b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ra, rb) {
		t.Errorf("two runs of trial 7 differ:\n%+v\n%+v", ra, rb)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two recordings of trial 7 differ")
	}
	rc, _ := Trial(p, v, 8, nil)
	if reflect.DeepEqual(ra.Reads, rc.Reads) {
		t.Error("trials 7 and 8 read the same at the same times")
	}
}

// TestParamsCheck checks that Validate refuses bad parameters with a
// message naming them.
func TestParamsCheck(t *testing.T) {
	for _, c := range []struct {
		set  func(*Params)
		want string
	}{
		{func(p *Params) { p.PEs = 1 }, "1 PEs"},
		{func(p *Params) { p.PEs = 33 }, "33 PEs"},
		{func(p *Params) { p.NANDs = 0 }, "0 operations"},
		{func(p *Params) { p.Metres = [2]float64{5, 2} }, "cable lengths"},
		{func(p *Params) { p.Skew = -1 }, "skew"},
		{func(p *Params) { p.Speed = 0.6 }, "speed spread"},
		{func(p *Params) { p.Port.Op = 0 }, "some time"},
		{func(p *Params) { p.Port.StallMax = 100 * time.Microsecond }, "stalls up to 100µs"},
	} {
		p := DefaultParams()
		c.set(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one about %q", err, c.want)
		}
		if _, err := Trial(p, Variants[0], 0, nil); err == nil {
			t.Errorf("Trial ran with bad parameters (%s)", c.want)
		}
	}
	if _, err := VariantsNamed([]string{"nand/fast"}); err == nil {
		t.Error("an unknown variant accepted")
	}
}

// TestMargins checks the margin search's order of things on the seed's
// ports: the variant without the resample loses the race at a shorter
// cable than the driver's NAND, which holds well beyond 10 feet.
func TestMargins(t *testing.T) {
	p := DefaultParams()
	ms, err := Margins(context.Background(), p, []Variant{variant(t, "nand/no-resample"), variant(t, "nand/shipped")}, []timed.PortTiming{timed.ISA}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("%d margins for 2 variants on 1 port", len(ms))
	}
	short, shipped := ms[0], ms[1]
	t.Logf("%+v\n%+v", short, shipped)
	if short.MaxMetres >= timed.TenFeet || short.BeyondMetres || shipped.MaxMetres < 10 {
		t.Errorf("cable margins: no-resample %v m, shipped %v m; want below 10 feet, and 10 m or more", short.MaxMetres, shipped.MaxMetres)
	}
}

// TestPicture draws a failing trial of the variant without the resample:
// the picture shows the wrong read, after the last PE's write.
func TestPicture(t *testing.T) {
	p := DefaultParams()
	var buf bytes.Buffer
	r, err := Trial(p, variant(t, "nand/no-resample"), firstStale(t, p), &buf)
	if err != nil {
		t.Fatal(err)
	}
	f, err := vcd.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	k, i := Focus(r)
	plot, err := Picture(r, k, i, "test")
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := f.SVG(&svg, plot); err != nil {
		t.Fatal(err)
	}
	if plot.Marks[0].T >= plot.Marks[1].T || !strings.Contains(plot.Marks[1].Label, "should be") {
		t.Errorf("marks %+v: want the write, then the wrong read", plot.Marks)
	}
	st := f.Signal(fmt.Sprintf("pc.PE%d.status", k))
	if v, ok := st.Uint(plot.Marks[1].T); !ok || uint8(v)>>3&0xf != r.Wrong[0].Got {
		t.Errorf("the status in the file at the read is %s, the PE got %04b", st.At(plot.Marks[1].T), r.Wrong[0].Got)
	}
	if _, err := Picture(r, 9, 0, ""); err == nil {
		t.Error("a picture of PE 9 of 4 accepted")
	}
}

// firstStale finds the first trial in which the variant without the
// resample reads a stale NAND.
func firstStale(t *testing.T, p Params) int {
	t.Helper()
	for i := range 100 {
		r, err := Trial(p, variant(t, "nand/no-resample"), i, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Wrong) > 0 && r.Wrong[0].Cause == Stale {
			return i
		}
	}
	t.Fatal("no stale read in 100 trials")
	return 0
}
