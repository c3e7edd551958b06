package papers

// Aggregate operations (docs/protocol.md, "Operations built on the NAND"):
// every collective is built from the board's one communication primitive, the
// 4-bit NAND of every PE's data lines (one NAND = one barrier with a side
// effect = 5 port operations). The NAND-operation count of each collective
// is documented on it, beside the lower bound and the naive gather-everything
// count; docs/aggregates.md has the table. n is the PE count, w the width of
// the type in bits, q = ceil(w/4) the number of nybbles of one value.
//
// Arguments that an SPMD program passes identically on every PE (a root, an
// Op, a ScanKind, the type) are checked locally before any NAND: each PE that
// was given the bad argument returns the error without communicating, so the
// cluster stays in step. Arguments that legitimately differ between PEs
// (slice lengths, Multicast's source, Scatter's input on the root) are
// checked collectively, so that every PE returns the error.
//
// Participation (docs/aggregates.md): every collective combines the
// participants (PE.Participants) only. The bitwise ones, Min, Max and Vote
// get that from the board itself — a PE that does not take part drives all
// ones, the NAND's identity; the gathers skip departed PEs, which also saves
// their NANDs (n below counts participants). A collective that needs a
// departed PE's value (a root, a source) fails on every PE with an
// *AbsentError naming it, before any NAND.

import (
	"fmt"
	"math/bits"
	"reflect"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/peset"
)

// Unsigned is the set of unsigned integer types the bitwise collectives take.
type Unsigned interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Integer is the set of fixed-size integer types.
type Integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | Unsigned
}

// Number is the set of fixed-size scalar types the collectives move bit for
// bit: the integers and the IEEE floats.
type Number interface {
	Integer | ~float32 | ~float64
}

func (p *PE) argError(op, format string, a ...any) error {
	return p.errorf("%s: %s: %w", op, fmt.Sprintf(format, a...), ErrArgument)
}

// absent reports PEs that do not take part whose values op needed as why.
func (p *PE) absent(op string, missing peset.Set, why string) error {
	return &AbsentError{PE: p.self, Op: op, Missing: missing, Why: why}
}

// widthOf returns the width of T in bits.
func widthOf[T Number]() int {
	var z T
	return int(unsafe.Sizeof(z)) * 8
}

func maskOf(w int) uint64 { return ^uint64(0) >> (64 - w) }

// toBits returns the bit pattern of v (zero-extended).
func toBits[T Number](v T) uint64 {
	switch unsafe.Sizeof(v) {
	case 1:
		return uint64(*(*uint8)(unsafe.Pointer(&v)))
	case 2:
		return uint64(*(*uint16)(unsafe.Pointer(&v)))
	case 4:
		return uint64(*(*uint32)(unsafe.Pointer(&v)))
	}
	return *(*uint64)(unsafe.Pointer(&v))
}

// fromBits returns the T whose bit pattern is the low bits of b.
func fromBits[T Number](b uint64) (v T) {
	switch unsafe.Sizeof(v) {
	case 1:
		*(*uint8)(unsafe.Pointer(&v)) = uint8(b)
	case 2:
		*(*uint16)(unsafe.Pointer(&v)) = uint16(b)
	case 4:
		*(*uint32)(unsafe.Pointer(&v)) = uint32(b)
	default:
		*(*uint64)(unsafe.Pointer(&v)) = b
	}
	return v
}

type numKind uint8

const (
	unsignedKind numKind = iota
	signedKind
	floatKind
)

func kindOf[T Number]() numKind {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Float32, reflect.Float64:
		return floatKind
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return signedKind
	}
	return unsignedKind
}

// nandBits returns the bitwise NAND over every PE of the low w bits of x:
// q NANDs, one per nybble, low nybble first.
func (p *PE) nandBits(x uint64, w int) (uint64, error) {
	if p.eng != nil {
		return p.engineBits("NAND", BitAnd, x, w)
	}
	var r uint64
	for k := 0; k < w; k += 4 {
		y, err := p.NAND(uint8(x>>k) & lpt.DataMask)
		if err != nil {
			return 0, err
		}
		r |= uint64(y) << k
	}
	return r & maskOf(w), nil
}

// broadcastBits returns root's low w bits of x on every PE: q NANDs. The root
// drives the complement of each nybble and every other PE 0xf, so each NAND
// is the root's nybble itself.
func (p *PE) broadcastBits(root int, x uint64, w int) (uint64, error) {
	if p.eng != nil {
		if p.self != root {
			x = 0
		}
		r, err := p.engineBits("broadcast", BitOr, x, w)
		return ^r & maskOf(w), err
	}
	if p.self == root {
		x = ^x
	} else {
		x = ^uint64(0)
	}
	return p.nandBits(x, w)
}

// engineBits is nandBits on an engine: for BitAnd the NAND of every
// participant's low w bits, for BitOr the NOR, in one allreduce (the
// complement makes both what the board computes).
func (p *PE) engineBits(op string, o Op, x uint64, w int) (uint64, error) {
	if err := p.usable(op); err != nil {
		return 0, err
	}
	r, err := p.eng.Allreduce(op, o, 64, x&maskOf(w))
	if err != nil {
		return 0, p.fromEngine(err)
	}
	p.stats.NANDs++
	return ^r & maskOf(w), nil
}

// NANDBits returns the bitwise NAND of every PE's x.
// NANDs: ceil(w/4); lower bound ceil(w/4); naive gather n*ceil(w/4).
func NANDBits[T Unsigned](p *PE, x T) (_ T, err error) {
	defer p.end(&err)
	if err := p.begin("NANDBits"); err != nil {
		return 0, err
	}
	r, err := p.nandBits(uint64(x), widthOf[T]())
	return T(r), err
}

// OR returns the bitwise OR of every PE's x (a NAND of the complements).
// NANDs: ceil(w/4); lower bound ceil(w/4); naive gather n*ceil(w/4).
func OR[T Unsigned](p *PE, x T) (_ T, err error) {
	defer p.end(&err)
	if err := p.begin("OR"); err != nil {
		return 0, err
	}
	r, err := p.nandBits(^uint64(x), widthOf[T]())
	return T(r), err
}

// AND returns the bitwise AND of every PE's x (the complement of a NAND).
// NANDs: ceil(w/4); lower bound ceil(w/4); naive gather n*ceil(w/4).
func AND[T Unsigned](p *PE, x T) (_ T, err error) {
	defer p.end(&err)
	if err := p.begin("AND"); err != nil {
		return 0, err
	}
	r, err := p.nandBits(uint64(x), widthOf[T]())
	return ^T(r), err
}

// checkRoot checks a root every PE passed: in range, and taking part.
func (p *PE) checkRoot(op string, root int) error {
	if root < 0 || root >= p.n {
		return p.argError(op, "root %d out of range: with %d PEs the root is 0 to %d", root, p.n, p.n-1)
	}
	if p.members&(1<<root) == 0 {
		return p.absent(op, 1<<root, "root")
	}
	return nil
}

// Broadcast returns root's v on every PE; the other PEs' v is ignored. A
// root that does not take part is an *AbsentError on every PE.
// NANDs: ceil(w/4) (a byte: 2 NANDs, 10 port operations); lower bound
// ceil(w/4); naive gather n*ceil(w/4).
func Broadcast[T Number](p *PE, root int, v T) (_ T, err error) {
	defer p.end(&err)
	if err := p.begin("Broadcast"); err != nil {
		return 0, err
	}
	if err := p.checkRoot("Broadcast", root); err != nil {
		return 0, err
	}
	var r T
	err = broadcastValue(p, root, &v, &r)
	return r, err
}

// BroadcastBytes copies root's buf into every other PE's buf, a nybble per
// NAND. Every PE passes a buf of the same length; when they differ, every PE
// returns an error wrapping ErrArgument and no data moves.
// NANDs: 9 + 2*len(buf) (the root broadcasts its length, 8 NANDs, then one
// ANY of "my length differs"); lower bound 2*len(buf); naive gather
// 2*n*len(buf).
func (p *PE) BroadcastBytes(root int, buf []byte) (err error) {
	defer p.end(&err)
	if err := p.begin("BroadcastBytes"); err != nil {
		return err
	}
	return BroadcastSlice(p, root, buf)
}

// BroadcastSlice copies root's buf into every other PE's buf, element by
// element. Every PE passes a buf of the same length; when they differ, every
// PE returns an error wrapping ErrArgument and no data moves.
// NANDs: 9 + len(buf)*ceil(w/4); lower bound len(buf)*ceil(w/4); naive
// gather n*len(buf)*ceil(w/4).
func BroadcastSlice[T Number](p *PE, root int, buf []T) (err error) {
	defer p.end(&err)
	if err := p.begin("BroadcastSlice"); err != nil {
		return err
	}
	const op = "BroadcastSlice"
	if err := p.checkRoot(op, root); err != nil {
		return err
	}
	if err := p.sameLength(op, root, len(buf)); err != nil {
		return err
	}
	for i := range buf {
		if err := broadcastValue(p, root, &buf[i], &buf[i]); err != nil {
			return err
		}
	}
	return nil
}

// sameLength checks collectively that every PE passed length l: the root
// broadcasts its length as 32 bits (8 NANDs), then one ANY of "mine
// differs" (1 NAND). A root length of 2^32 or more counts as a difference.
func (p *PE) sameLength(op string, root, l int) error {
	rl, err := p.broadcastBits(root, uint64(uint32(l)), 32)
	if err != nil {
		return err
	}
	bad, err := p.Any(uint64(l) != rl || uint64(l) > 0xffffffff)
	if err != nil {
		return err
	}
	if bad {
		return p.argError(op, "the PEs passed slices of different lengths (this PE %d, root PE %d has %d): pass the same length on every PE", l, root, rl)
	}
	return nil
}

// Gather fills out on every PE with every participant's v: out[i] is PE i's
// v. Each participant broadcasts in turn. When some PEs do not take part,
// their slots are set to zero and every PE returns an *AbsentError naming
// them (the participants' slots are filled). A PE whose out does not have
// PEs() elements still takes part (so the others are not held up) and
// returns an error.
// NANDs: n*ceil(w/4); lower bound ceil((n-1)*w/4) (every PE must receive
// the other n-1 values); naive n*ceil(w/4).
func Gather[T Number](p *PE, v T, out []T) (err error) {
	defer p.end(&err)
	if err := p.begin("Gather"); err != nil {
		return err
	}
	ok := len(out) == p.n
	err = eachMember(p, p.members, &v, false, func(j int, x T) {
		if ok {
			out[j] = x
		}
	})
	if err != nil {
		return err
	}
	if !ok {
		return p.argError("Gather", "out has %d elements, want one per PE (%d)", len(out), p.n)
	}
	if missing := p.all() &^ p.members; missing != 0 {
		for _, k := range missing.Members() {
			out[k] = 0
		}
		return p.absent("Gather", missing, "value")
	}
	return nil
}

// Multicast returns, on each PE, the v of the PE it names in from: the
// seed's arbitrary multicast (a permutation when every PE names a different
// source). First an OR of an (n+1)-bit mask tells every PE which PEs are
// sources (bit s: some other PE receives from s; bit n: some PE passed a
// from out of range, which fails on every PE); then each source broadcasts
// its v, in PE order. A PE that receives from itself needs no broadcast. A
// source that does not take part is an *AbsentError on every PE, naming it.
// NANDs: ceil((n+1)/4) + s*ceil(w/4) for s sources (a permutation without
// fixed points: s = n); lower bound ceil(s*w/4) (each source's value must
// reach its receivers); naive gather n*ceil(w/4), which cannot tell a bad
// source.
func Multicast[T Number](p *PE, from int, v T) (_ T, err error) {
	defer p.end(&err)
	if err := p.begin("Multicast"); err != nil {
		return 0, err
	}
	const op = "Multicast"
	var mask uint64
	switch {
	case from < 0 || from >= p.n:
		mask = 1 << p.n
	case from != p.self:
		mask = 1 << from
	}
	srcs, err := p.orWide(mask, p.n+1)
	if err != nil {
		return 0, err
	}
	if srcs>>p.n != 0 {
		if from < 0 || from >= p.n {
			return 0, p.argError(op, "source PE %d out of range: with %d PEs sources are 0 to %d", from, p.n, p.n-1)
		}
		return 0, p.argError(op, "another PE named a source out of range")
	}
	if gone := peset.Set(srcs) &^ p.members; gone != 0 {
		return 0, p.absent(op, gone, "source")
	}
	got := v
	var buf T
	for s := range bits.Len64(srcs) {
		if srcs&(1<<s) == 0 {
			continue
		}
		if err := broadcastValue(p, s, &v, &buf); err != nil {
			return 0, err
		}
		if s == from {
			got = buf
		}
	}
	return got, nil
}

// orWide returns the OR over every PE of the low w bits of x, for any w up
// to 64: ceil(w/4) NANDs.
func (p *PE) orWide(x uint64, w int) (uint64, error) {
	return p.nandBits(^x, w)
}

// Scatter returns, on PE i, root's in[i]; only the root's in is read. The
// root first says (one NAND) whether its in has one element per PE; if not,
// every PE returns an error. Then the root broadcasts each participant's
// element except its own. A root that does not take part is an
// *AbsentError on every PE.
// NANDs: 1 + (n-1)*ceil(w/4); lower bound ceil((n-1)*w/4) (the n-1 values
// only the root knows must all cross the board); naive 1 + n*ceil(w/4).
func Scatter[T Number](p *PE, root int, in []T) (_ T, err error) {
	defer p.end(&err)
	if err := p.begin("Scatter"); err != nil {
		return 0, err
	}
	const op = "Scatter"
	if err := p.checkRoot(op, root); err != nil {
		return 0, err
	}
	bad, err := p.Any(p.self == root && len(in) != p.n)
	if err != nil {
		return 0, err
	}
	if bad {
		return 0, p.argError(op, "root PE %d's input has %d elements, want one per PE (%d)", root, len(in), p.n)
	}
	var got, x T
	if p.self == root {
		got = in[root]
	}
	for j := range p.n {
		if j == root || p.members&(1<<j) == 0 {
			continue
		}
		if p.self == root {
			x = in[j]
		}
		var r T
		if err := broadcastValue(p, root, &x, &r); err != nil {
			return 0, err
		}
		if j == p.self {
			got = r
		}
	}
	return got, nil
}
