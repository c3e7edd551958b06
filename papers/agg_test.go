package papers_test

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// testPEs are the PE counts every collective is checked with.
var testPEs = []int{2, 3, 4, 8, 16}

// gen draws a random value of T: any bit pattern for integers, a finite
// value (sometimes ±0) for floats, so reference sums stay comparable.
func gen[T papers.Number](r *rand.Rand) T {
	if papers.IsFloat[T]() {
		switch r.IntN(8) {
		case 0:
			return 0
		case 1:
			return T(math.Copysign(0, -1))
		}
		return T((r.Float64() - 0.5) * math.Pow(2, float64(r.IntN(40)-20)))
	}
	return papers.FromBits[T](r.Uint64())
}

// same compares bit patterns (so -0 and +0, and NaNs, are told apart).
func same[T papers.Number](a, b T) bool { return papers.ToBits(a) == papers.ToBits(b) }

// counted runs f and checks it took want NANDs.
func counted(p *papers.PE, what string, want int, f func() error) error {
	before := p.Stats().NANDs
	if err := f(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if got := p.Stats().NANDs - before; got != uint64(want) {
		return fmt.Errorf("%s: %d NANDs, documented %d", what, got, want)
	}
	return nil
}

// refFold is the plain-Go reference combine, in PE order.
func refFold[T papers.Number](vals []T, f func(a, b T) T) T {
	acc := vals[0]
	for _, v := range vals[1:] {
		acc = f(acc, v)
	}
	return acc
}

func refOp[T papers.Number](op papers.Op) func(a, b T) T {
	isFloat := papers.IsFloat[T]()
	return func(a, b T) T {
		switch op {
		case papers.Sum:
			return a + b
		case papers.Product:
			return a * b
		case papers.Min:
			if isFloat && a == 0 && b == 0 { // -0 < +0
				if math.Signbit(float64(a)) {
					return a
				}
				return b
			}
			return min(a, b)
		case papers.Max:
			if isFloat && a == 0 && b == 0 {
				if math.Signbit(float64(a)) {
					return b
				}
				return a
			}
			return max(a, b)
		}
		x, y := papers.ToBits(a), papers.ToBits(b)
		switch op {
		case papers.BitAnd:
			return papers.FromBits[T](x & y)
		case papers.BitOr:
			return papers.FromBits[T](x | y)
		}
		return papers.FromBits[T](x ^ y)
	}
}

// refScan computes PE i's scan result by the definition in ScanKind.
func refScan[T papers.Number](vals []T, i int, f func(a, b T) T, id T, kind papers.ScanKind) T {
	var seq []T
	if kind&papers.Backward == 0 {
		seq = append(seq, vals[:i+1]...)
	} else {
		for j := len(vals) - 1; j >= i; j-- {
			seq = append(seq, vals[j])
		}
	}
	if kind&papers.Exclusive != 0 {
		seq = seq[:len(seq)-1]
	}
	if len(seq) == 0 {
		return id
	}
	return refFold(seq, f)
}

// world is what every PE knows of one round: every PE's value, and who
// takes part. Each PE draws the same random numbers, so each knows every
// PE's input and can compute every reference result itself.
type world[T papers.Number] struct {
	name    string
	vals    []T   // every PE's value, by PE id
	members []int // the participants, in PE order
	q       int   // nybbles per value
}

// part returns the participants' values in PE order.
func (w world[T]) part() []T {
	out := make([]T, len(w.members))
	for i, k := range w.members {
		out[i] = w.vals[k]
	}
	return out
}

// rank returns PE k's place among the participants.
func (w world[T]) rank(k int) int { return slices.Index(w.members, k) }

// memberOf maps a random draw to a participant.
func (w world[T]) memberOf(r *rand.Rand) int { return w.members[r.IntN(len(w.members))] }

// checkNumber runs every collective that takes any Number on random
// inputs, checking values against refFold/refScan over the participants and
// NAND counts against the documented formulas (n counting participants).
func checkNumber[T papers.Number](p *papers.PE, seed uint64, iters int) error {
	r := rand.New(rand.NewPCG(seed, uint64(p.PEs())))
	w := world[T]{name: fmt.Sprintf("%T", T(0)), vals: make([]T, p.PEs()), members: p.Participants().Members(), q: papers.WidthOf[T]() / 4}
	for it := 0; it < iters; it++ {
		for i := range w.vals {
			w.vals[i] = gen[T](r)
		}
		for _, check := range []func(*papers.PE, world[T], *rand.Rand, int) error{checkBroadcasts[T], checkGather[T], checkReductions[T], checkFuncs[T]} {
			if err := check(p, w, r, it); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkBroadcasts checks Broadcast and BroadcastSlice from a participant.
func checkBroadcasts[T papers.Number](p *papers.PE, w world[T], r *rand.Rand, _ int) error {
	root, v := w.memberOf(r), w.vals[p.Self()]
	var got T
	if err := counted(p, w.name+" papers.Broadcast", w.q, func() (err error) { got, err = papers.Broadcast(p, root, v); return }); err != nil {
		return err
	}
	if !same(got, w.vals[root]) {
		return fmt.Errorf("%s papers.Broadcast from %d: got %v, want %v", w.name, root, got, w.vals[root])
	}
	l := r.IntN(5)
	buf := make([]T, l)
	want := make([]T, l)
	for i := range want {
		want[i] = gen[T](r)
	}
	if p.Self() == root {
		copy(buf, want)
	}
	if err := counted(p, w.name+" papers.BroadcastSlice", 9+l*w.q, func() error { return papers.BroadcastSlice(p, root, buf) }); err != nil {
		return err
	}
	for i := range want {
		if !same(buf[i], want[i]) {
			return fmt.Errorf("%s BroadcastSlice: element %d is %v, want %v", w.name, i, buf[i], want[i])
		}
	}
	return nil
}

// checkGather checks Gather, Multicast (a permutation or arbitrary sources
// among the participants) and Scatter.
func checkGather[T papers.Number](p *papers.PE, w world[T], r *rand.Rand, it int) error {
	n, self, m := p.PEs(), p.Self(), len(w.members)
	out := make([]T, n)
	before := p.Stats().NANDs
	err := papers.Gather(p, w.vals[self], out)
	if absent := (peset.Set(1)<<n - 1) &^ p.Participants(); absent != 0 {
		var ae *papers.AbsentError
		if !errors.As(err, &ae) || ae.Missing != absent {
			return fmt.Errorf("%s Gather with PEs %v absent: %v, want an AbsentError naming them", w.name, absent.Members(), err)
		}
	} else if err != nil {
		return fmt.Errorf("%s Gather: %w", w.name, err)
	}
	if got := p.Stats().NANDs - before; got != uint64(m*w.q) {
		return fmt.Errorf("%s Gather: %d NANDs, documented %d", w.name, got, m*w.q)
	}
	for i := range out {
		if want := w.valueOf(i); !same(out[i], want) {
			return fmt.Errorf("%s Gather: out[%d] = %v, want %v", w.name, i, out[i], want)
		}
	}
	from := make([]int, n) // a permutation of the participants, or arbitrary ones
	for i, k := range r.Perm(m) {
		from[w.members[i]] = w.members[k]
	}
	if it%2 == 1 {
		for _, k := range w.members {
			from[k] = w.memberOf(r)
		}
	}
	srcs := 0
	for _, s := range w.members {
		for _, k := range w.members {
			if from[k] == s && k != s {
				srcs++
				break
			}
		}
	}
	var got T
	if err := counted(p, w.name+" papers.Multicast", (n+1+3)/4+srcs*w.q, func() (err error) { got, err = papers.Multicast(p, from[self], w.vals[self]); return }); err != nil {
		return err
	}
	if !same(got, w.vals[from[self]]) {
		return fmt.Errorf("%s papers.Multicast from %d: got %v, want %v", w.name, from[self], got, w.vals[from[self]])
	}
	root := w.memberOf(r)
	var in []T
	if self == root {
		in = w.vals
	}
	if err := counted(p, w.name+" papers.Scatter", 1+(m-1)*w.q, func() (err error) { got, err = papers.Scatter(p, root, in); return }); err != nil {
		return err
	}
	if !same(got, w.vals[self]) {
		return fmt.Errorf("%s papers.Scatter from %d: got %v, want %v", w.name, root, got, w.vals[self])
	}
	return nil
}

// valueOf is what Gather leaves in PE k's slot: its value, or zero when it
// does not take part.
func (w world[T]) valueOf(k int) T {
	if w.rank(k) < 0 {
		return 0
	}
	return w.vals[k]
}

// checkReductions checks Reduce and Scan with every op.
func checkReductions[T papers.Number](p *papers.PE, w world[T], r *rand.Rand, it int) error {
	n, m := p.PEs(), len(w.members)
	ops := []papers.Op{papers.Sum, papers.Product, papers.Min, papers.Max}
	if !papers.IsFloat[T]() {
		ops = append(ops, papers.BitAnd, papers.BitOr, papers.BitXor)
	}
	scanOp := ops[r.IntN(len(ops))] // big clusters scan with one op per round
	for oi, op := range ops {
		if n > 4 && (op == papers.Sum || op == papers.Product || op == papers.BitXor) && op != scanOp && op != ops[it%3] {
			continue // big clusters: the gather-based ops take turns
		}
		nands, scanNANDs := m*w.q, m*w.q
		switch op {
		case papers.BitAnd, papers.BitOr:
			nands, scanNANDs = w.q, w.q*bits.Len(uint(n)) // ceil(log2(n+1)) per nybble
		case papers.Min, papers.Max:
			nands = map[int]int{8: 4, 16: 7, 32: 14, 64: 28}[4*w.q]
		}
		var got T
		v, f := w.vals[p.Self()], refOp[T](op)
		if err := counted(p, w.name+" papers.Reduce "+op.String(), nands, func() (err error) { got, err = papers.Reduce(p, op, v); return }); err != nil {
			return err
		}
		if want := refFold(w.part(), f); !same(got, want) {
			return fmt.Errorf("%s papers.Reduce %v: got %v, want %v", w.name, op, got, want)
		}
		if n > 4 && op != scanOp {
			continue
		}
		kind := papers.ScanKind(it+oi) % 4
		if err := counted(p, w.name+" papers.Scan "+op.String(), scanNANDs, func() (err error) { got, err = papers.Scan(p, op, v, kind); return }); err != nil {
			return err
		}
		if want := refScan(w.part(), w.rank(p.Self()), f, papers.Identity[T](op), kind); !same(got, want) {
			return fmt.Errorf("%s papers.Scan %v kind %d: got %v, want %v", w.name, op, kind, got, want)
		}
	}
	return nil
}

// checkFuncs checks ReduceFunc and ScanFunc with a non-commutative combine,
// which catches any deviation from PE order.
func checkFuncs[T papers.Number](p *papers.PE, w world[T], _ *rand.Rand, it int) error {
	n, m, v := p.PEs(), len(w.members), w.vals[p.Self()]
	user := func(a, b T) T { return a*3 + b }
	var got T
	if err := counted(p, w.name+" papers.ReduceFunc", m*w.q, func() (err error) { got, err = papers.ReduceFunc(p, v, user); return }); err != nil {
		return err
	}
	if want := refFold(w.part(), user); !same(got, want) {
		return fmt.Errorf("%s ReduceFunc: got %v, want %v", w.name, got, want)
	}
	for kind := papers.Inclusive; kind <= papers.Exclusive|papers.Backward; kind++ {
		if n > 4 && kind != papers.ScanKind(it)%4 {
			continue
		}
		if err := counted(p, w.name+" papers.ScanFunc", m*w.q, func() (err error) { got, err = papers.ScanFunc(p, v, user, 7, kind); return }); err != nil {
			return err
		}
		if want := refScan(w.part(), w.rank(p.Self()), user, 7, kind); !same(got, want) {
			return fmt.Errorf("%s papers.ScanFunc kind %d: got %v, want %v", w.name, kind, got, want)
		}
	}
	return nil
}

// checkUnsigned runs the bitwise collectives of Unsigned types.
func checkUnsigned[T papers.Unsigned](p *papers.PE, seed uint64, iters int) error {
	n, self := p.PEs(), p.Self()
	q := papers.WidthOf[T]() / 4
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	name := fmt.Sprintf("%T", T(0))
	vals := make([]T, n)
	members := p.Participants().Members()
	for it := 0; it < iters; it++ {
		for i := range vals {
			// Sparse bits so that OR and AND both have something to say.
			vals[i] = papers.FromBits[T](r.Uint64() & r.Uint64())
			if it%2 == 1 {
				vals[i] = ^vals[i]
			}
		}
		or, and := T(0), ^T(0) // a PE that does not take part drives all ones: ignored
		for _, k := range members {
			or |= vals[k]
			and &= vals[k]
		}
		for _, c := range []struct {
			name string
			f    func(*papers.PE, T) (T, error)
			want T
		}{{"papers.OR", papers.OR[T], or}, {"papers.AND", papers.AND[T], and}, {"papers.NANDBits", papers.NANDBits[T], ^and}} {
			var got T
			if err := counted(p, name+" "+c.name, q, func() (err error) { got, err = c.f(p, vals[self]); return }); err != nil {
				return err
			}
			if got != c.want {
				return fmt.Errorf("%s %s: got %#x, want %#x", name, c.name, got, c.want)
			}
		}
	}
	return nil
}

// TestCollectives checks every collective × every type × every PE count.
// TestBitScan checks the binary-search OR and AND scans on every kind and
// on inputs whose bits are sparse (OR) or dense (AND), so that the first PE
// holding a bit falls anywhere in the scan order, including nowhere.
func TestBitScan(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8, 13} {
		t.Run(fmt.Sprint(n, "PEs"), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(n), 7))
			rounds := 12
			vals := make([][]uint16, rounds)
			for i := range vals {
				vals[i] = make([]uint16, n)
				for k := range vals[i] {
					for range 2 {
						vals[i][k] |= 1 << r.IntN(16) // two bits: most bits are held by nobody or one papers.PE
					}
				}
			}
			err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
				for i, vs := range vals {
					op, kind := []papers.Op{papers.BitOr, papers.BitAnd}[i%2], papers.ScanKind(i/2)%4
					v := vs[p.Self()]
					if op == papers.BitAnd {
						v = ^v
					}
					var got uint16
					if err := counted(p, "papers.Scan "+op.String(), 4*bits.Len(uint(n)), func() (err error) { got, err = papers.Scan(p, op, v, kind); return }); err != nil {
						return err
					}
					in := make([]uint16, n)
					for k := range in {
						in[k] = vs[k]
						if op == papers.BitAnd {
							in[k] = ^in[k]
						}
					}
					if want := refScan(in, p.Self(), refOp[uint16](op), papers.Identity[uint16](op), kind); got != want {
						return fmt.Errorf("papers.PE %d: papers.Scan %v kind %d of %04x: got %04x, want %04x", p.Self(), op, kind, in, got, want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCollectives(t *testing.T) {
	for _, n := range testPEs {
		// Big clusters are slow to emulate on a small machine (every NAND
		// needs every goroutine scheduled twice): fewer rounds there.
		iters := 4
		if n > 4 || raceEnabled {
			iters = 1
		}
		t.Run(fmt.Sprint(n, "PEs"), func(t *testing.T) {
			err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
				checks := []func(*papers.PE, uint64, int) error{
					checkUnsigned[uint8], checkUnsigned[uint16], checkUnsigned[uint32], checkUnsigned[uint64],
					checkNumber[uint8], checkNumber[int8], checkNumber[int16], checkNumber[uint16],
					checkNumber[int32], checkNumber[uint32], checkNumber[int64], checkNumber[uint64],
					checkNumber[float32], checkNumber[float64],
				}
				if raceEnabled && n > 2 {
					// The race detector slows the emulation ~10-fold: the
					// full matrix runs without it (and at 2 PEs with it).
					checks = []func(*papers.PE, uint64, int) error{checkUnsigned[uint16], checkNumber[int8], checkNumber[uint32], checkNumber[float64]}
					if n > 4 {
						checks = []func(*papers.PE, uint64, int) error{checkUnsigned[uint16], checkNumber[int8]}
					}
				}
				for _, check := range checks {
					if err := check(p, uint64(n), iters); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
