package papers

import (
	"fmt"
	"math"
	"math/bits"
)

// Op is a built-in combining operator for Reduce and Scan.
type Op uint8

// The built-in operators. BitAnd, BitOr and BitXor take integer types only.
const (
	Sum Op = iota
	Product
	Min
	Max
	BitAnd
	BitOr
	BitXor
)

func (o Op) String() string {
	if o > BitXor {
		return fmt.Sprintf("Op(%d)", uint8(o))
	}
	return [...]string{"Sum", "Product", "Min", "Max", "BitAnd", "BitOr", "BitXor"}[o]
}

// ScanKind selects the flavour of a scan; Exclusive and Backward combine
// (Exclusive|Backward).
type ScanKind uint8

const (
	// Inclusive forward: PE i gets v0 op v1 op ... op vi.
	Inclusive ScanKind = 0
	// Exclusive leaves out the PE's own value: forward, PE i gets
	// v0 op ... op v(i-1), and PE 0 the identity.
	Exclusive ScanKind = 1
	// Backward runs from PE n-1 down: PE i gets v(n-1) op ... op vi
	// (exclusive: v(n-1) op ... op v(i+1), and PE n-1 the identity).
	Backward ScanKind = 2
)

func (p *PE) checkOp(name string, op Op, k numKind) error {
	if op > BitXor {
		return p.argError(name, "unknown operator %v: use Sum, Product, Min, Max, BitAnd, BitOr or BitXor", op)
	}
	if op >= BitAnd && k == floatKind {
		return p.argError(name, "%v is not defined on floating-point values: use an integer type", op)
	}
	return nil
}

// Reduce returns, on every PE, v0 op v1 op ... op v(n-1) over the
// participants, combined in PE order (so float results are bit-identical on
// every PE, independent of timing). The algorithm depends on op:
//
//   - BitOr, BitAnd: one bitwise OR/AND; NANDs ceil(w/4) (the lower bound).
//   - Min, Max: a radix-5 search for the extreme value on an order-preserving
//     unsigned key: every NAND tests 4 thresholds (one per line, ANY of "my
//     value is at least t"), so it narrows the range five-fold. NANDs
//     K(w) = ceil(w / log2 5): 4, 7, 14, 28 for w = 8, 16, 32, 64; lower
//     bound ceil(w/4); naive gather n*ceil(w/4).
//   - Sum, Product, BitXor: gather then combine; NANDs n*ceil(w/4) (see
//     docs/aggregates.md for why nothing cheaper is known); lower bound
//     ceil(w/4).
//
// Floats: Min and Max use the IEEE total order (-0 < +0; NaNs with the sign
// bit clear are above +Inf, with it set below -Inf). ReduceCount also says
// how many PEs contributed.
func Reduce[T Number](p *PE, op Op, v T) (_ T, err error) {
	defer p.end(&err)
	if err := p.begin("Reduce"); err != nil {
		return 0, err
	}
	k := kindOf[T]()
	if err := p.checkOp("Reduce", op, k); err != nil {
		return 0, err
	}
	w := widthOf[T]()
	switch op {
	case BitOr:
		r, err := p.orWide(toBits(v), w)
		return fromBits[T](r), err
	case BitAnd:
		r, err := p.nandBits(toBits(v), w)
		return fromBits[T](^r), err
	case Min, Max:
		flip := uint64(0)
		if op == Min {
			flip = maskOf(w)
		}
		key, err := p.maxKey(orderKey(toBits(v), w, k)^flip, w)
		return fromBits[T](fromKey(key^flip, w, k)), err
	}
	if p.eng != nil && k != floatKind {
		if err := p.usable("Reduce"); err != nil {
			return 0, err
		}
		return engineReduce(p, op, v)
	}
	return reduce(p, v, func(a, b T) T { return apply(op, a, b) })
}

// ReduceFunc returns, on every PE, the combination of every participant's v
// with the user's associative combine, applied in PE order:
// combine(...combine(combine(v0, v1), v2)..., v(n-1)). combine must be
// deterministic; it need not be commutative.
//
// T is any fixed-size type without pointers: a number, a byte array such
// as [16]byte, or a struct of those — SPIDER's programmable combine over
// blocks. Values cross the board as their memory image (a naturally aligned
// 1-, 2-, 4- or 8-byte value as a number), so for structs every PE must
// share the type's layout (one architecture). A type with pointers (strings,
// slices, maps…) is an ErrArgument on every PE, before any NAND.
// NANDs: n*2*size (a gather of size bytes per PE); no allocation.
func ReduceFunc[T any](p *PE, v T, combine func(a, b T) T) (_ T, err error) {
	defer p.end(&err)
	if err := p.begin("ReduceFunc"); err != nil {
		return *new(T), err
	}
	if err := p.checkFunc("ReduceFunc", checkPlain[T](), combine == nil); err != nil {
		var z T
		return z, err
	}
	return reduce(p, v, combine)
}

// reduce folds every participant's v in PE order.
func reduce[T any](p *PE, v T, combine func(a, b T) T) (T, error) {
	var acc T
	first := true
	err := eachMember(p, p.members, &v, false, func(_ int, x T) {
		if first {
			acc, first = x, false
		} else {
			acc = combine(acc, x)
		}
	})
	return acc, err
}

// checkKind checks a ScanKind.
func (p *PE) checkKind(op string, kind ScanKind) error {
	if kind > Exclusive|Backward {
		return p.argError(op, "unknown ScanKind %d: use Inclusive, Exclusive, Backward or Exclusive|Backward", kind)
	}
	return nil
}

// checkFunc checks ReduceFunc's and ScanFunc's arguments: plain says why T
// cannot cross the board ("" when it can).
func (p *PE) checkFunc(op, plain string, nilCombine bool) error {
	if plain != "" {
		return p.argError(op, "%s: only fixed-size values without pointers cross the board (numbers, and arrays and structs of them)", plain)
	}
	if nilCombine {
		return p.argError(op, "combine is nil")
	}
	return nil
}

// Scan returns this PE's prefix (see ScanKind) of every participant's v
// under op, combined in PE order; the identity (0 for Sum, BitOr and BitXor,
// 1 for Product, all ones for BitAnd, the type's largest value or +Inf for
// Min, smallest or -Inf for Max) goes to the first PE of an exclusive scan.
// NANDs: ceil(w/4)*ceil(log2(n+1)) for BitOr and BitAnd (bitScan); for the
// others n*ceil(w/4) (a gather; each PE then combines locally). Lower bound
// ceil(w/4). ScanCount also says how many PEs contributed.
func Scan[T Number](p *PE, op Op, v T, kind ScanKind) (_ T, err error) {
	defer p.end(&err)
	if err := p.begin("Scan"); err != nil {
		return 0, err
	}
	k := kindOf[T]()
	if err := p.checkOp("Scan", op, k); err != nil {
		return 0, err
	}
	if kind <= Exclusive|Backward && (op == BitOr || op == BitAnd) && p.eng == nil {
		return bitScan(p, op, v, kind)
	}
	return ScanFunc(p, v, func(a, b T) T { return apply(op, a, b) }, identity[T](op, k), kind)
}

// bitScan is Scan for BitOr and BitAnd. Bit b of a PE's result says whether
// a PE at or before it in scan order holds a 1 in bit b (BitAnd: a 0), so
// it is enough for every PE to learn, per bit, the first PE holding one: a
// binary search over the ranks 0..n (n: nobody), each step an ANY of "I
// hold it and my rank is at most mid". Four bits search at once, one per
// data line: ceil(log2(n+1)) NANDs per nybble instead of the gather's n.
func bitScan[T Number](p *PE, op Op, v T, kind ScanKind) (T, error) {
	w := widthOf[T]()
	x := toBits(v)
	if op == BitAnd {
		x = ^x
	}
	rank := p.self
	if kind&Backward != 0 {
		rank = p.n - 1 - p.self
	}
	steps := bits.Len(uint(p.n)) // ceil(log2(n+1))
	var out uint64
	for g := 0; g < w; g += 4 {
		lo, hi := [4]int{}, [4]int{p.n, p.n, p.n, p.n} // the first holder is in [lo, hi]
		for range steps {
			var c uint8
			for k := range 4 {
				if x>>(g+k)&1 != 0 && rank <= (lo[k]+hi[k])/2 {
					c |= 1 << k
				}
			}
			y, err := p.OR4(c)
			if err != nil {
				return 0, err
			}
			for k := range 4 {
				if mid := (lo[k] + hi[k]) / 2; y>>k&1 != 0 {
					hi[k] = mid
				} else {
					lo[k] = min(mid+1, hi[k])
				}
			}
		}
		for k := range 4 {
			if lo[k] < rank || lo[k] == rank && kind&Exclusive == 0 {
				out |= 1 << (g + k)
			}
		}
	}
	if op == BitAnd {
		out = ^out
	}
	return fromBits[T](out & maskOf(w)), nil
}

// ScanFunc is Scan with the user's associative combine (applied in the
// order the scan runs, as in Scan) and identity (what the first PE of an
// exclusive scan gets; it is never combined). T is any fixed-size type
// without pointers, as for ReduceFunc.
// NANDs: n*2*size (a gather); no allocation.
func ScanFunc[T any](p *PE, v T, combine func(a, b T) T, identity T, kind ScanKind) (_ T, err error) {
	defer p.end(&err)
	if err := p.begin("ScanFunc"); err != nil {
		return *new(T), err
	}
	const op = "ScanFunc"
	if err := p.checkFunc(op, checkPlain[T](), combine == nil); err != nil {
		var z T
		return z, err
	}
	if err := p.checkKind(op, kind); err != nil {
		var z T
		return z, err
	}
	// Values arrive in scan order; this PE's result combines those before
	// it, and its own unless the scan is exclusive.
	exclusive, self := kind&Exclusive != 0, p.self
	acc, have, done := identity, false, false
	err = eachMember(p, p.members, &v, kind&Backward != 0, func(j int, x T) {
		if done || j == self && exclusive {
			done = true
			return
		}
		if have {
			acc = combine(acc, x)
		} else {
			acc, have = x, true
		}
		done = j == self
	})
	return acc, err
}

// apply is one built-in combining step.
func apply[T Number](op Op, a, b T) T {
	switch op {
	case Sum:
		return a + b
	case Product:
		return a * b
	case Min, Max:
		w, k := widthOf[T](), kindOf[T]()
		if (orderKey(toBits(a), w, k) < orderKey(toBits(b), w, k)) == (op == Min) {
			return a
		}
		return b
	case BitAnd:
		return fromBits[T](toBits(a) & toBits(b))
	case BitOr:
		return fromBits[T](toBits(a) | toBits(b))
	}
	return fromBits[T](toBits(a) ^ toBits(b))
}

// identity returns op's identity element in T.
func identity[T Number](op Op, k numKind) T {
	w := widthOf[T]()
	switch op {
	case Product:
		return 1
	case BitAnd:
		return fromBits[T](maskOf(w))
	case Min, Max:
		if k == floatKind {
			inf := math.Float64bits(math.Inf(1))
			if w == 32 {
				inf = uint64(math.Float32bits(float32(math.Inf(1))))
			}
			if op == Max {
				inf |= 1 << (w - 1)
			}
			return fromBits[T](inf)
		}
		if op == Min {
			return fromBits[T](fromKey(maskOf(w), w, k))
		}
		return fromBits[T](fromKey(0, w, k))
	}
	return 0
}

// orderKey maps a value's bits to an unsigned key with the same order:
// signed integers flip the sign bit; floats (IEEE total order) flip every
// bit of negatives and the sign bit of positives.
func orderKey(b uint64, w int, k numKind) uint64 {
	top := uint64(1) << (w - 1)
	switch k {
	case signedKind:
		return b ^ top
	case floatKind:
		if b&top != 0 {
			return ^b & maskOf(w)
		}
		return b | top
	}
	return b
}

// fromKey inverts orderKey.
func fromKey(key uint64, w int, k numKind) uint64 {
	top := uint64(1) << (w - 1)
	switch k {
	case signedKind:
		return key ^ top
	case floatKind:
		if key&top != 0 {
			return key &^ top
		}
		return ^key & maskOf(w)
	}
	return key
}

// maxSteps returns K(w), the NANDs of a w-bit maximum search (the least K
// with 5^K >= 2^w), and 5^(K-1), the part size of its first step.
func maxSteps(w int) (int, uint64) {
	mask := maskOf(w)
	for k, c := 0, uint64(1); ; k, c = k+1, c*5 {
		if c > mask/5 { // 5c > mask: K = k+1 steps cover 2^w values
			return k + 1, c
		}
	}
}

// maxKey returns the largest key over every PE in K(w) NANDs. The maximum
// is known to lie in [lo, lo+5c); each NAND splits that range into five
// parts of c values and line j (j = 0..3) is the ANY of "my key is at least
// lo+(j+1)*c" over the PEs still in the range. The lines that come back set
// (a thermometer code) say which part holds the maximum.
func (p *PE) maxKey(key uint64, w int) (uint64, error) {
	if p.eng != nil {
		if err := p.usable("Reduce"); err != nil {
			return 0, err
		}
		r, err := p.eng.Allreduce("Reduce", Max, 64, key)
		return r, p.fromEngine(err)
	}
	steps, c := maxSteps(w)
	var lo uint64
	for range steps {
		x := uint8(0xf)
		if key >= lo {
			m := min((key-lo)/c, 4)
			x &^= 1<<m - 1 // drive 0 on lines 0..m-1: the NAND reads 1 there
		}
		r, err := p.NAND(x)
		if err != nil {
			return 0, err
		}
		lo += uint64(bits.OnesCount8(r)) * c
		c /= 5
	}
	return lo, nil
}
