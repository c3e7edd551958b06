// Package word reads and writes the words of memory that several PEs
// reach at once — one PE's one-sided get or put (am.Direct) while the
// owner's handlers run atomic procedures on the same word — atomically, as
// the CM-5's word-sized remote accesses were: a read never sees half a
// write, and a put never falls between an atomic procedure's read and
// its write.
//
// Values are 1, 2, 4 or 8 bytes, aligned to their size. Go has no atomic
// operations on 1 and 2 bytes, so those are done on the aligned 4-byte word
// that holds them: it must be memory of the caller's (Split-C's spread
// arrays are allocated in 8-byte words for this).
package word

import (
	"sync/atomic"
	"unsafe"
)

// littleEndian: the byte at the lowest address of a word is its least
// significant (every target but a few MIPS and POWER ones).
var littleEndian = func() bool {
	x := uint32(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// in returns the aligned 4-byte word holding the size bytes at p, their
// shift in it and their mask.
func in(p unsafe.Pointer, size uintptr) (*uint32, uint, uint32) {
	a := uintptr(p)
	off := a & 3
	w := (*uint32)(unsafe.Add(p, -int(off)))
	shift := uint(8 * off)
	if !littleEndian {
		shift = uint(8 * (4 - size - off))
	}
	return w, shift, uint32(1)<<(8*size) - 1
}

// Load returns the size-byte value at p.
func Load(p unsafe.Pointer, size uintptr) uint64 {
	switch size {
	case 8:
		return atomic.LoadUint64((*uint64)(p))
	case 4:
		return uint64(atomic.LoadUint32((*uint32)(p)))
	}
	w, shift, mask := in(p, size)
	return uint64(atomic.LoadUint32(w) >> shift & mask)
}

// Store sets the size-byte value at p to x (its low size bytes).
func Store(p unsafe.Pointer, size uintptr, x uint64) {
	switch size {
	case 8:
		atomic.StoreUint64((*uint64)(p), x)
		return
	case 4:
		atomic.StoreUint32((*uint32)(p), uint32(x))
		return
	}
	for w, shift, mask := in(p, size); ; {
		old := atomic.LoadUint32(w)
		if atomic.CompareAndSwapUint32(w, old, old&^(mask<<shift)|(uint32(x)&mask)<<shift) {
			return
		}
	}
}

// CompareAndSwap sets the size-byte value at p to x if it is old, and
// reports whether it did.
func CompareAndSwap(p unsafe.Pointer, size uintptr, old, x uint64) bool {
	switch size {
	case 8:
		return atomic.CompareAndSwapUint64((*uint64)(p), old, x)
	case 4:
		return atomic.CompareAndSwapUint32((*uint32)(p), uint32(old), uint32(x))
	}
	w, shift, mask := in(p, size)
	for {
		cur := atomic.LoadUint32(w)
		if cur>>shift&mask != uint32(old)&mask {
			return false
		}
		if atomic.CompareAndSwapUint32(w, cur, cur&^(mask<<shift)|(uint32(x)&mask)<<shift) {
			return true
		}
	}
}

// Copy copies src to dst, where one of them is shared memory: a value of
// 1, 2, 4 or 8 bytes whose shared side is aligned to its size goes as one
// atomic word (Load or Store), anything longer byte by byte, as a bulk
// transfer's bytes may.
func Copy(dst, src []byte, sharedDst bool) {
	n := uintptr(len(src))
	if n != uintptr(len(dst)) || (n != 1 && n != 2 && n != 4 && n != 8) {
		copy(dst, src)
		return
	}
	d, s := unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src))
	if sharedDst && uintptr(d)%n == 0 {
		Store(d, n, plain(s, n))
	} else if !sharedDst && uintptr(s)%n == 0 {
		setPlain(d, n, Load(s, n))
	} else {
		copy(dst, src)
	}
}

// plain and setPlain read and write a value of the caller's own memory,
// which need not be aligned.
func plain(p unsafe.Pointer, n uintptr) (x uint64) {
	b := unsafe.Slice((*byte)(p), n)
	for i := range b {
		x |= uint64(b[order(i, n)]) << (8 * i)
	}
	return x
}

func setPlain(p unsafe.Pointer, n uintptr, x uint64) {
	b := unsafe.Slice((*byte)(p), n)
	for i := range b {
		b[order(i, n)] = byte(x >> (8 * i))
	}
}

// order is the index of the i-th least significant byte of an n-byte value.
func order(i int, n uintptr) int {
	if littleEndian {
		return i
	}
	return int(n) - 1 - i
}
