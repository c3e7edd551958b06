// Package conformance is the behaviour every substrate of package papers
// must show, written once: each Case is a PE program that checks its own
// results and returns an error saying what differed. Package emulate's
// tests run it on the emulated board, in-process; package mpi's tests run
// it under mpirun on MPI (docs/mpi.md). A case assumes nothing about the
// substrate but what papers documents, and needs at least 3 PEs.
package conformance

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// Case is one behaviour: Run runs on every PE of the program.
type Case struct {
	Name string
	Run  func(p *papers.PE, s Side) error
}

// Side is a channel beside the substrate, for what a PE that has left
// cannot learn through it: when the others are done without it.
type Side interface {
	// Post records one occurrence of event.
	Post(event string)
	// Await waits until event has occurred n times, or returns an error
	// after a minute.
	Await(event string, n int) error
}

// MemSide is a Side for PEs in one process.
type MemSide struct {
	mu   sync.Mutex
	seen map[string]int
}

func (m *MemSide) Post(event string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]int{}
	}
	m.seen[event]++
}

func (m *MemSide) Await(event string, n int) error {
	return await(event, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.seen[event] >= n
	})
}

// DirSide is a Side for PEs in processes of one machine: each occurrence
// is a file in the directory.
type DirSide struct {
	Dir  string
	Self int
	seq  atomic.Int64
}

func (d *DirSide) Post(event string) {
	name := fmt.Sprintf("%s.%d.%d", event, d.Self, d.seq.Add(1))
	os.WriteFile(filepath.Join(d.Dir, name), nil, 0o644)
}

func (d *DirSide) Await(event string, n int) error {
	return await(event, func() bool {
		m, _ := filepath.Glob(filepath.Join(d.Dir, event+".*"))
		return len(m) >= n
	})
}

func await(event string, ready func() bool) error {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if ready() {
			return nil
		}
	}
	return fmt.Errorf("side channel: %q did not happen within a minute", event)
}

// Cases returns the suite, in the order it runs.
func Cases() []Case {
	return []Case{
		{"Barrier", barriers},
		{"NAND", nands},
		{"Reduce", reduces},
		{"FloatOrder", floatOrder},
		{"Scan", scans},
		{"Broadcast", broadcasts},
		{"Gather", gathers},
		{"SplitPhase", splitPhase},
		{"Interrupt", interrupts},
		{"LeaveRejoin", leaveRejoin},
		{"Count", counts},
		{"LED", leds},
		{"Errors", argErrors},
	}
}

func barriers(p *papers.PE, _ Side) error {
	before := p.Stats().Barriers
	for range 100 {
		if err := p.Barrier(); err != nil {
			return err
		}
	}
	if got := p.Stats().Barriers - before; got != 100 {
		return fmt.Errorf("100 barriers counted as %d", got)
	}
	return nil
}

func nands(p *papers.PE, _ Side) error {
	n, k := p.PEs(), p.Self()
	// PE k drives 0xf except line k%4: the NAND is set on the lines some PE
	// drove low.
	var want uint8
	for i := range n {
		want |= 1 << (i % 4)
	}
	r, err := p.NAND(0xf &^ (1 << (k % 4)))
	if err != nil || r != want {
		return fmt.Errorf("NAND = %#x, %v; want %#x", r, err, want)
	}
	or, err := p.OR4(uint8(1 << (k % 4)))
	if err != nil || or != want {
		return fmt.Errorf("OR4 = %#x, %v; want %#x", or, err, want)
	}
	and, err := p.AND4(0xf &^ uint8(1<<(k%4)))
	if err != nil || and != 0xf&^want {
		return fmt.Errorf("AND4 = %#x, %v; want %#x", and, err, 0xf&^want)
	}
	any, err := p.Any(k == n-1)
	if err != nil || !any {
		return fmt.Errorf("Any(only the last PE) = %v, %v", any, err)
	}
	all, err := p.All(k != 0)
	if err != nil || all {
		return fmt.Errorf("All(all but PE 0) = %v, %v", all, err)
	}
	vote, err := p.Vote(k%2 == 1)
	var odd peset.Set
	for i := 1; i < n; i += 2 {
		odd |= 1 << i
	}
	if err != nil || vote != odd {
		return fmt.Errorf("Vote(odd PEs) = %b, %v; want %b", vote, err, odd)
	}
	x := uint32(1) << (k * 5 % 32)
	o, err := papers.OR(p, x)
	var wantOr uint32
	for i := range n {
		wantOr |= 1 << (i * 5 % 32)
	}
	if err != nil || o != wantOr {
		return fmt.Errorf("OR[uint32] = %#x, %v; want %#x", o, err, wantOr)
	}
	a, err := papers.AND(p, ^x)
	if err != nil || a != ^wantOr {
		return fmt.Errorf("AND[uint32] = %#x, %v; want %#x", a, err, ^wantOr)
	}
	nb, err := papers.NANDBits(p, uint16(0xffff))
	if err != nil || nb != 0 {
		return fmt.Errorf("NANDBits(all ones) = %#x, %v; want 0", nb, err)
	}
	return nil
}

// value is PE k's contribution of type T: signed values of both signs,
// unsigned ones with high bits set, floats with fractions.
func value[T papers.Number](k int) T {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return T(float64(k)*1.25 - 2.5)
	case int8, int16, int32, int64:
		return T(k*37 - 50)
	}
	return T(0) - T(k*3+1) // wraps: high bits set
}

func reduces(p *papers.PE, _ Side) error {
	return errors.Join(
		reduceType[int8](p), reduceType[int16](p), reduceType[int32](p), reduceType[int64](p),
		reduceType[uint8](p), reduceType[uint16](p), reduceType[uint32](p), reduceType[uint64](p),
		reduceType[float32](p), reduceType[float64](p))
}

func isFloat[T papers.Number]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}

// ref combines a and b with op as package papers documents it.
func ref[T papers.Number](op papers.Op, a, b T) T {
	switch op {
	case papers.Sum:
		return a + b
	case papers.Product:
		return a * b
	case papers.Min:
		return min(a, b)
	case papers.Max:
		return max(a, b)
	}
	x, y := toU64(a), toU64(b)
	switch op {
	case papers.BitAnd:
		return fromU64[T](x & y)
	case papers.BitOr:
		return fromU64[T](x | y)
	}
	return fromU64[T](x ^ y)
}

func toU64[T papers.Number](v T) uint64 {
	switch x := any(v).(type) {
	case float32:
		return uint64(math.Float32bits(x))
	case float64:
		return math.Float64bits(x)
	}
	return uint64(v) // integers only: floats returned above
}

func fromU64[T papers.Number](b uint64) T {
	var z T
	switch any(z).(type) {
	case float32:
		return any(math.Float32frombits(uint32(b))).(T)
	case float64:
		return any(math.Float64frombits(b)).(T)
	}
	return T(b)
}

var ops = []papers.Op{papers.Sum, papers.Product, papers.Min, papers.Max, papers.BitAnd, papers.BitOr, papers.BitXor}

// reduceType checks Reduce with every operator on T: the result of every
// participant's value folded in PE order, bit for bit; bitwise operators
// on floats are an argument error on every PE.
func reduceType[T papers.Number](p *papers.PE) error {
	name := fmt.Sprintf("%T", T(0))
	for _, op := range ops {
		got, err := papers.Reduce(p, op, value[T](p.Self()))
		if op >= papers.BitAnd && isFloat[T]() {
			if !errors.Is(err, papers.ErrArgument) {
				return fmt.Errorf("Reduce[%s](%v) = %v, %v; want ErrArgument", name, op, got, err)
			}
			continue
		}
		want := value[T](0)
		for i := 1; i < p.PEs(); i++ {
			want = ref(op, want, value[T](i))
		}
		if err != nil || toU64(got) != toU64(want) {
			return fmt.Errorf("Reduce[%s](%v) = %v, %v; want %v", name, op, got, err, want)
		}
	}
	return nil
}

// floatOrder: a float sum depends on the order of its terms; every PE gets
// the PE-order sum, bit for bit.
func floatOrder(p *papers.PE, _ Side) error {
	terms := []float64{1e16, 1, -1e16, 1}
	v := terms[p.Self()%len(terms)]
	got, err := papers.Reduce(p, papers.Sum, v)
	if err != nil {
		return err
	}
	want := terms[0]
	for i := 1; i < p.PEs(); i++ {
		want += terms[i%len(terms)]
	}
	if math.Float64bits(got) != math.Float64bits(want) {
		return fmt.Errorf("float64 Sum = %v, want the PE-order sum %v", got, want)
	}
	all := make([]uint64, p.PEs())
	if err := papers.Gather(p, math.Float64bits(got), all); err != nil {
		return err
	}
	for k, b := range all {
		if b != all[0] {
			return fmt.Errorf("PE %d's float sum %v differs from PE 0's %v", k, math.Float64frombits(b), math.Float64frombits(all[0]))
		}
	}
	return nil
}

func scans(p *papers.PE, _ Side) error {
	return errors.Join(scanType[int32](p), scanType[uint8](p), scanType[float64](p), scanType[int64](p))
}

// identity is op's identity in T as package papers documents it.
func identity[T papers.Number](op papers.Op) T {
	switch op {
	case papers.Product:
		return 1
	case papers.BitAnd:
		return fromU64[T](math.MaxUint64)
	case papers.Min, papers.Max:
		var z T
		var v any
		switch any(z).(type) {
		case float64:
			v = math.Inf(1)
		case int32:
			v = int32(math.MaxInt32)
		case int64:
			v = int64(math.MaxInt64)
		case uint8:
			v = uint8(math.MaxUint8)
		}
		if op == papers.Max {
			switch x := v.(type) {
			case float64:
				v = -x
			case int32:
				v = int32(math.MinInt32)
			case int64:
				v = int64(math.MinInt64)
			case uint8:
				v = uint8(0)
			}
		}
		return v.(T)
	}
	return 0
}

func scanType[T papers.Number](p *papers.PE) error {
	n, k := p.PEs(), p.Self()
	for _, op := range ops {
		if op >= papers.BitAnd && isFloat[T]() {
			continue
		}
		for _, kind := range []papers.ScanKind{papers.Inclusive, papers.Exclusive, papers.Backward, papers.Exclusive | papers.Backward} {
			got, err := papers.Scan(p, op, value[T](k), kind)
			order := make([]int, 0, n)
			for i := range n {
				if kind&papers.Backward != 0 {
					order = append(order, n-1-i)
				} else {
					order = append(order, i)
				}
			}
			want, have := identity[T](op), false
			for _, i := range order {
				if i == k && kind&papers.Exclusive != 0 {
					break
				}
				if have {
					want = ref(op, want, value[T](i))
				} else {
					want, have = value[T](i), true
				}
				if i == k {
					break
				}
			}
			if err != nil || toU64(got) != toU64(want) {
				return fmt.Errorf("Scan[%T](%v, kind %d) on PE %d = %v, %v; want %v", T(0), op, kind, k, got, err, want)
			}
		}
	}
	return nil
}

func broadcasts(p *papers.PE, _ Side) error {
	n, k := p.PEs(), p.Self()
	for root := range n {
		if err := errors.Join(bcastType[int8](p, root), bcastType[uint16](p, root), bcastType[int32](p, root),
			bcastType[uint64](p, root), bcastType[float32](p, root), bcastType[float64](p, root)); err != nil {
			return err
		}
	}
	buf := make([]uint16, 5)
	for i := range buf {
		buf[i] = uint16(k*100 + i)
	}
	if err := papers.BroadcastSlice(p, 1, buf); err != nil {
		return err
	}
	for i, v := range buf {
		if v != uint16(100+i) {
			return fmt.Errorf("BroadcastSlice from PE 1: element %d = %d, want %d", i, v, 100+i)
		}
	}
	b := []byte(fmt.Sprintf("from PE %02d", k)) // one length on every PE, up to 99 PEs
	if err := p.BroadcastBytes(n-1, b); err != nil || string(b) != fmt.Sprintf("from PE %02d", n-1) {
		return fmt.Errorf("BroadcastBytes from PE %d: %q, %v", n-1, b, err)
	}
	return nil
}

func bcastType[T papers.Number](p *papers.PE, root int) error {
	got, err := papers.Broadcast(p, root, value[T](p.Self()))
	if want := value[T](root); err != nil || toU64(got) != toU64(want) {
		return fmt.Errorf("Broadcast[%T] from PE %d = %v, %v; want %v", T(0), root, got, err, want)
	}
	return nil
}

func gathers(p *papers.PE, _ Side) error {
	n, k := p.PEs(), p.Self()
	out := make([]float32, n)
	if err := papers.Gather(p, value[float32](k), out); err != nil {
		return err
	}
	for i, v := range out {
		if v != value[float32](i) {
			return fmt.Errorf("papers.Gather: slot %d = %v, want %v", i, v, value[float32](i))
		}
	}
	// Multicast: a rotation, every PE receiving from its right neighbour.
	from := (k + 1) % n
	got, err := papers.Multicast(p, from, int64(k*k))
	if err != nil || got != int64(from*from) {
		return fmt.Errorf("papers.Multicast from PE %d = %d, %v; want %d", from, got, err, from*from)
	}
	in := make([]int16, n)
	for i := range in {
		in[i] = int16(1000 + 10*i)
	}
	s, err := papers.Scatter(p, 0, in)
	if err != nil || s != int16(1000+10*k) {
		return fmt.Errorf("papers.Scatter from PE 0 = %d, %v; want %d", s, err, 1000+10*k)
	}
	type rec struct {
		A int32
		B [3]byte
	}
	r, err := papers.ReduceFunc(p, rec{A: int32(k), B: [3]byte{byte(k)}}, func(a, b rec) rec {
		return rec{A: a.A*10 + b.A, B: [3]byte{a.B[0] | b.B[0]}}
	})
	var want rec
	for i := range n {
		want = rec{A: want.A*10 + int32(i), B: [3]byte{want.B[0] | byte(i)}}
	}
	if err != nil || r != want {
		return fmt.Errorf("ReduceFunc over a struct = %+v, %v; want %+v (PE order)", r, err, want)
	}
	return nil
}

// splitPhase: data set before a split-phase barrier travels with it:
// SenseNAND reads the NAND of every PE's data once the barrier is done.
func splitPhase(p *papers.PE, _ Side) error {
	k := p.Self()
	if err := p.SetData(0xf &^ (1 << (k % 4))); err != nil {
		return err
	}
	if err := p.StartBarrier(); err != nil {
		return err
	}
	if err := p.Barrier(); !errors.Is(err, papers.ErrSplit) {
		return fmt.Errorf("p.Barrier during a split-phase barrier: %v, want ErrSplit", err)
	}
	for {
		done, err := p.QueryBarrier()
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	var want uint8
	for i := range p.PEs() {
		want |= 1 << (i % 4)
	}
	r, err := p.SenseNAND()
	if err != nil || r != want {
		return fmt.Errorf("SenseNAND after the split-phase barrier = %#x, %v; want %#x", r, err, want)
	}
	if err := p.StartBarrier(); err != nil {
		return err
	}
	if err := p.CompleteBarrier(); err != nil {
		return err
	}
	return p.SetData(0xf)
}

// untilInterrupt runs barriers until one returns a parallel interrupt. It
// is bounded by time, not by a count: on a loaded machine a PE about to
// raise can be descheduled for longer than a million fast barriers take.
func untilInterrupt(p *papers.PE) (*papers.InterruptError, error) {
	deadline := time.Now().Add(interruptWithin)
	for i := 0; ; i++ {
		err := p.Barrier()
		var ie *papers.InterruptError
		if errors.As(err, &ie) {
			return ie, nil
		}
		if err != nil {
			return nil, err
		}
		if i%1024 == 0 && time.Now().After(deadline) {
			return nil, fmt.Errorf("no interrupt in %v of barriers", interruptWithin)
		}
	}
}

// interruptWithin bounds untilInterrupt.
const interruptWithin = time.Minute

// interrupts: PE 1 raises an interrupt with a code while the others run
// barriers; every PE gets the code, and the group is back in step.
func interrupts(p *papers.PE, _ Side) error {
	before := p.Stats().Interrupts
	if p.Self() == 1 {
		code, err := p.Interrupt(0x5)
		if err != nil || code != 0x5 {
			return fmt.Errorf("Interrupt(5) = %#x, %v", code, err)
		}
	} else {
		ie, err := untilInterrupt(p)
		if err != nil {
			return err
		}
		if ie.Code != 0x5 || ie.Left != 0 || ie.Members != p.Participants() {
			return fmt.Errorf("interrupt seen as %+v, want code 5 and no change", ie)
		}
	}
	if got := p.Stats().Interrupts - before; got != 1 {
		return fmt.Errorf("p.Stats counts %d interrupts, want 1", got)
	}
	if err := p.CheckInterrupt(); err != nil {
		return fmt.Errorf("CheckInterrupt with none pending: %v", err)
	}
	sum, err := papers.Reduce(p, papers.Sum, int32(p.Self()))
	if n := int32(p.PEs()); err != nil || sum != n*(n-1)/2 {
		return fmt.Errorf("a reduction after the interrupt = %d, %v: not in step", sum, err)
	}
	return nil
}

// leaveRejoin: the last PE leaves; the others see it named, combine
// without it, and get an *AbsentError naming it as a root; then it rejoins
// with a code and every PE takes part again.
func leaveRejoin(p *papers.PE, s Side) error {
	n, k, last := p.PEs(), p.Self(), p.PEs()-1
	all := peset.Set(1)<<n - 1
	if k == last {
		if err := p.Leave(); err != nil {
			return err
		}
		if err := p.Barrier(); !errors.Is(err, papers.ErrLeft) {
			return fmt.Errorf("p.Barrier after Leave: %v, want ErrLeft", err)
		}
		if err := s.Await("solo", n-1); err != nil { // the others run without us
			return err
		}
		code, err := p.Rejoin(0x3)
		if err != nil || code != 0x3 {
			return fmt.Errorf("Rejoin(3) = %#x, %v", code, err)
		}
	} else {
		ie, err := untilInterrupt(p)
		if err != nil {
			return err
		}
		if ie.Left != 1<<last || p.Participants() != all&^(1<<last) {
			return fmt.Errorf("departure seen as %v (participants %b)", ie, p.Participants())
		}
		sum, err := papers.Reduce(p, papers.Sum, int32(k+1))
		if m := int32(n - 1); err != nil || sum != m*(m+1)/2 {
			return fmt.Errorf("the sum without PE %d = %d, %v; want %d", last, sum, err, m*(m+1)/2)
		}
		_, err = papers.Broadcast(p, last, int32(k))
		var ae *papers.AbsentError
		if !errors.As(err, &ae) || ae.Missing != 1<<last {
			return fmt.Errorf("papers.Broadcast from the departed PE %d: %v, want an *AbsentError naming it", last, err)
		}
		s.Post("solo")
		ie, err = untilInterrupt(p)
		if err != nil {
			return err
		}
		if ie.Joined != 1<<last || ie.Code != 0x3 {
			return fmt.Errorf("rejoin seen as %+v, want Joined PE %d with code 3", ie, last)
		}
	}
	if p.Participants() != all {
		return fmt.Errorf("participants after the rejoin: %b, want %b", p.Participants(), all)
	}
	sum, err := papers.Reduce(p, papers.Sum, int32(k+1))
	if m := int32(n); err != nil || sum != m*(m+1)/2 {
		return fmt.Errorf("the sum after the rejoin = %d, %v; want %d", sum, err, m*(m+1)/2)
	}
	return nil
}

// counts: SPIDER's delivered/total (papers.Count) with every PE taking
// part, then with one gone.
func counts(p *papers.PE, s Side) error {
	n, k := p.PEs(), p.Self()
	r, c, err := papers.ReduceCount(p, papers.BitOr, uint32(1)<<k)
	if err != nil || r != 1<<n-1 || !c.Complete() || c.String() != fmt.Sprintf("%d/%d", n, n) {
		return fmt.Errorf("ReduceCount with every PE = %#x, %v, %v", r, c, err)
	}
	if k == 0 {
		if err := p.Leave(); err != nil {
			return err
		}
		if err := s.Await("counted", n-1); err != nil {
			return err
		}
		_, err := p.Rejoin(0)
		return err
	}
	if _, err := untilInterrupt(p); err != nil {
		return err
	}
	r, c, err = papers.ReduceCount(p, papers.BitOr, uint32(1)<<k)
	want := fmt.Sprintf("%d/%d (PE 0 missing)", n-1, n)
	if err != nil || r != 1<<n-2 || c.Complete() || c.String() != want {
		return fmt.Errorf("ReduceCount without PE 0 = %#x, %v, %v; want %s", r, c, err, want)
	}
	s.Post("counted")
	_, err = untilInterrupt(p) // PE 0 rejoins
	return err
}

// leds: the colour is the program's to set; a colour that is not one is
// an argument error.
func leds(p *papers.PE, _ Side) error {
	if err := p.SetLED(papers.Orange); err != nil || p.LED() != papers.Orange {
		return fmt.Errorf("SetLED(Orange): %v, LED %v", err, p.LED())
	}
	if err := p.SetLED(papers.LED(9)); !errors.Is(err, papers.ErrArgument) {
		return fmt.Errorf("SetLED(9): %v, want ErrArgument", err)
	}
	if err := p.SetLED(papers.Green); err != nil {
		return err
	}
	return p.Barrier()
}

// argErrors: bad arguments fail with errors naming the PE and wrapping
// ErrArgument; one that only one PE can see fails on every PE.
func argErrors(p *papers.PE, _ Side) error {
	k := p.Self()
	_, err := papers.Broadcast(p, p.PEs(), int8(0))
	var named interface{ ErrorPE() int }
	if !errors.Is(err, papers.ErrArgument) || !errors.As(err, &named) || named.ErrorPE() != k {
		return fmt.Errorf("papers.Broadcast from PE %d (out of range): %v", p.PEs(), err)
	}
	in := []int8{1}
	_, err = papers.Scatter(p, 0, in)
	if !errors.Is(err, papers.ErrArgument) {
		return fmt.Errorf("papers.Scatter of 1 element to %d PEs: %v, want ErrArgument on every PE", p.PEs(), err)
	}
	if _, err := papers.Reduce(p, papers.Op(99), int32(1)); !errors.Is(err, papers.ErrArgument) {
		return fmt.Errorf("papers.Reduce with Op(99): %v", err)
	}
	return p.Barrier()
}
