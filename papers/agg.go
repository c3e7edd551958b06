package papers

// Aggregate operations (SPEC §6): every collective is built from the board's
// one communication primitive, the 4-bit NAND of every PE's data lines (one
// NAND = one barrier with a side effect = 5 port operations). The NAND-
// operation count of each collective is documented on it, beside the lower
// bound and the naive gather-everything count; docs/aggregates.md has the
// table. n is the PE count, w the width of the type in bits, q = ceil(w/4)
// the number of nybbles of one value.
//
// Arguments that an SPMD program passes identically on every PE (a root, an
// Op, a ScanKind, the type) are checked locally before any NAND: each PE that
// was given the bad argument returns the error without communicating, so the
// cluster stays in step. Arguments that legitimately differ between PEs
// (slice lengths, Multicast's source, Scatter's input on the root) are
// checked collectively, so that every PE returns the error.

import (
	"errors"
	"fmt"
	"math/bits"
	"reflect"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/lpt"
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

// ErrArgument is wrapped by every error that reports an argument no PE count
// can satisfy (test for it with errors.Is).
var ErrArgument = errors.New("invalid argument")

func (p *PE) argError(op, format string, a ...any) error {
	return fmt.Errorf("papers: PE %d: %s: %s: %w", p.self, op, fmt.Sprintf(format, a...), ErrArgument)
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
// is the root's nybble itself (SPEC §6).
func (p *PE) broadcastBits(root int, x uint64, w int) (uint64, error) {
	if p.self == root {
		x = ^x
	} else {
		x = ^uint64(0)
	}
	return p.nandBits(x, w)
}

// NANDBits returns the bitwise NAND of every PE's x.
// NANDs: ceil(w/4); lower bound ceil(w/4); naive gather n*ceil(w/4).
func NANDBits[T Unsigned](p *PE, x T) (T, error) {
	r, err := p.nandBits(uint64(x), widthOf[T]())
	return T(r), err
}

// OR returns the bitwise OR of every PE's x (a NAND of the complements).
// NANDs: ceil(w/4); lower bound ceil(w/4); naive gather n*ceil(w/4).
func OR[T Unsigned](p *PE, x T) (T, error) {
	r, err := p.nandBits(^uint64(x), widthOf[T]())
	return T(r), err
}

// AND returns the bitwise AND of every PE's x (the complement of a NAND).
// NANDs: ceil(w/4); lower bound ceil(w/4); naive gather n*ceil(w/4).
func AND[T Unsigned](p *PE, x T) (T, error) {
	r, err := p.nandBits(uint64(x), widthOf[T]())
	return ^T(r), err
}

func (p *PE) checkRoot(op string, root int) error {
	if root < 0 || root >= p.n {
		return p.argError(op, "root %d out of range: with %d PEs the root is 0 to %d", root, p.n, p.n-1)
	}
	return nil
}

// Broadcast returns root's v on every PE; the other PEs' v is ignored.
// NANDs: ceil(w/4) (a byte: 2 NANDs, 10 port operations); lower bound
// ceil(w/4); naive gather n*ceil(w/4).
func Broadcast[T Number](p *PE, root int, v T) (T, error) {
	if err := p.checkRoot("Broadcast", root); err != nil {
		return 0, err
	}
	r, err := p.broadcastBits(root, toBits(v), widthOf[T]())
	return fromBits[T](r), err
}

// BroadcastBytes copies root's buf into every other PE's buf, a nybble per
// NAND. Every PE passes a buf of the same length; when they differ, every PE
// returns an error wrapping ErrArgument and no data moves.
// NANDs: 9 + 2*len(buf) (the root broadcasts its length, 8 NANDs, then one
// ANY of "my length differs"); lower bound 2*len(buf); naive gather
// 2*n*len(buf).
func (p *PE) BroadcastBytes(root int, buf []byte) error {
	return BroadcastSlice(p, root, buf)
}

// BroadcastSlice copies root's buf into every other PE's buf, element by
// element. Every PE passes a buf of the same length; when they differ, every
// PE returns an error wrapping ErrArgument and no data moves.
// NANDs: 9 + len(buf)*ceil(w/4); lower bound len(buf)*ceil(w/4); naive
// gather n*len(buf)*ceil(w/4).
func BroadcastSlice[T Number](p *PE, root int, buf []T) error {
	const op = "BroadcastSlice"
	if err := p.checkRoot(op, root); err != nil {
		return err
	}
	if err := p.sameLength(op, root, len(buf)); err != nil {
		return err
	}
	w := widthOf[T]()
	for i := range buf {
		r, err := p.broadcastBits(root, toBits(buf[i]), w)
		if err != nil {
			return err
		}
		buf[i] = fromBits[T](r)
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

// Gather fills out on every PE with every PE's v: out[i] is PE i's v. Each
// PE broadcasts in turn. A PE whose out does not have PEs() elements still
// takes part (so the others are not held up) and returns an error.
// NANDs: n*ceil(w/4); lower bound ceil((n-1)*w/4) (every PE must receive
// the other n-1 values); naive n*ceil(w/4).
func Gather[T Number](p *PE, v T, out []T) error {
	w := widthOf[T]()
	ok := len(out) == p.n
	for j := 0; j < p.n; j++ {
		r, err := p.broadcastBits(j, toBits(v), w)
		if err != nil {
			return err
		}
		if ok {
			out[j] = fromBits[T](r)
		}
	}
	if !ok {
		return p.argError("Gather", "out has %d elements, want one per PE (%d)", len(out), p.n)
	}
	return nil
}

// Multicast returns, on each PE, the v of the PE it names in from: the
// seed's arbitrary multicast (a permutation when every PE names a different
// source). First an OR of an (n+1)-bit mask tells every PE which PEs are
// sources (bit s: some other PE receives from s; bit n: some PE passed a
// from out of range, which fails on every PE); then each source broadcasts
// its v, in PE order. A PE that receives from itself needs no broadcast.
// NANDs: ceil((n+1)/4) + s*ceil(w/4) for s sources (a permutation without
// fixed points: s = n); lower bound ceil(s*w/4) (each source's value must
// reach its receivers); naive gather n*ceil(w/4), which cannot tell a bad
// source.
func Multicast[T Number](p *PE, from int, v T) (T, error) {
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
			return 0, p.argError("Multicast", "source PE %d out of range: with %d PEs sources are 0 to %d", from, p.n, p.n-1)
		}
		return 0, p.argError("Multicast", "another PE named a source out of range")
	}
	w := widthOf[T]()
	got := v
	for s := range bits.Len64(srcs) {
		if srcs&(1<<s) == 0 {
			continue
		}
		r, err := p.broadcastBits(s, toBits(v), w)
		if err != nil {
			return 0, err
		}
		if s == from {
			got = fromBits[T](r)
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
// every PE returns an error. Then the root broadcasts each element except
// its own.
// NANDs: 1 + (n-1)*ceil(w/4); lower bound ceil((n-1)*w/4) (the n-1 values
// only the root knows must all cross the board); naive 1 + n*ceil(w/4).
func Scatter[T Number](p *PE, root int, in []T) (T, error) {
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
	w := widthOf[T]()
	var got T
	if p.self == root {
		got = in[root]
	}
	for j := 0; j < p.n; j++ {
		if j == root {
			continue
		}
		var x uint64
		if p.self == root {
			x = toBits(in[j])
		}
		r, err := p.broadcastBits(root, x, w)
		if err != nil {
			return 0, err
		}
		if j == p.self {
			got = fromBits[T](r)
		}
	}
	return got, nil
}
