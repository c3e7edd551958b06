package papers

// Moving values of any fixed-size, pointer-free type across the board, and
// the gather loop every gather-based collective shares.

import (
	"fmt"
	"github.com/ttlpapers/ttlpapers/peset"
	"reflect"
	"sync"
	"unsafe"
)

// sizeOf returns the size of T in bytes.
func sizeOf[T any]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// chunk returns the bits of the part of *v that starts at byte off, and
// their number: the whole value for a naturally aligned 1-, 2-, 4- or 8-byte
// type (read as a number, so a scalar keeps its value between machines of
// either byte order), else up to 8 bytes of its memory image, the first
// byte lowest.
func chunk[T any](v *T, off int) (uint64, int) {
	ptr := unsafe.Pointer(v)
	if size, align := unsafe.Sizeof(*v), unsafe.Alignof(*v); align >= size {
		switch size {
		case 1:
			return uint64(*(*uint8)(ptr)), 8
		case 2:
			return uint64(*(*uint16)(ptr)), 16
		case 4:
			return uint64(*(*uint32)(ptr)), 32
		case 8:
			return *(*uint64)(ptr), 64
		}
	}
	n := min(8, int(unsafe.Sizeof(*v))-off)
	var x uint64
	for i, c := range unsafe.Slice((*byte)(unsafe.Add(ptr, off)), n) {
		x |= uint64(c) << (8 * i)
	}
	return x, 8 * n
}

// setChunk stores into *v the part chunk(v, off) read.
func setChunk[T any](v *T, off int, x uint64) {
	ptr := unsafe.Pointer(v)
	if size, align := unsafe.Sizeof(*v), unsafe.Alignof(*v); align >= size {
		switch size {
		case 1:
			*(*uint8)(ptr) = uint8(x)
			return
		case 2:
			*(*uint16)(ptr) = uint16(x)
			return
		case 4:
			*(*uint32)(ptr) = uint32(x)
			return
		case 8:
			*(*uint64)(ptr) = x
			return
		}
	}
	n := min(8, int(unsafe.Sizeof(*v))-off)
	b := unsafe.Slice((*byte)(unsafe.Add(ptr, off)), n)
	for i := range b {
		b[i] = byte(x >> (8 * i))
	}
}

// broadcastValue sets *out, on every PE, to root's *v: ceil(8*size/4)
// NANDs (a byte: 2).
func broadcastValue[T any](p *PE, root int, v, out *T) error {
	for off := 0; off < sizeOf[T](); off += 8 {
		x, w := chunk(v, off)
		r, err := p.broadcastBits(root, x, w)
		if err != nil {
			return err
		}
		setChunk(out, off, r)
	}
	return nil
}

// eachMember has every PE of members broadcast its *v in turn — in PE order,
// or from PE n-1 down when backward — and calls got with each PE's value as
// it arrives: |members|*ceil(8*size/4) NANDs. It is the gather that every
// gather-based collective runs.
func eachMember[T any](p *PE, members peset.Set, v *T, backward bool, got func(pe int, val T)) error {
	if p.eng != nil {
		return engineGather(p, members, v, backward, got)
	}
	var buf T
	for i := range p.n {
		j := i
		if backward {
			j = p.n - 1 - i
		}
		if members&(1<<j) == 0 {
			continue
		}
		if err := broadcastValue(p, j, v, &buf); err != nil {
			return err
		}
		got(j, buf)
	}
	// A PE gone transparent broadcasts zeros. The census after every
	// gather (ceil(n/4) NANDs of its n*ceil(8*size/4) or more) finds one
	// that went before or during it, so that its result is never returned
	// as right; one that went earlier was there at the last census.
	if p.censusEvery > 0 {
		return p.census(p.outer, p.ops)
	}
	return nil
}

// plainTypes caches, per type, why its values cannot cross the board ("":
// they can).
var plainTypes sync.Map // reflect.Type → string

// checkPlain checks that T's values can cross the board as bytes: no
// pointers (strings, slices, maps, interfaces, funcs, channels included),
// since another PE's addresses mean nothing here.
func checkPlain[T any]() string {
	t := reflect.TypeFor[T]()
	if why, ok := plainTypes.Load(t); ok {
		return why.(string)
	}
	why := pointerIn(t, t.String())
	plainTypes.Store(t, why)
	return why
}

// pointerIn says where type t (reached as path) holds a pointer, or "".
func pointerIn(t reflect.Type, path string) string {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return ""
	case reflect.Array:
		return pointerIn(t.Elem(), path+"[]")
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if why := pointerIn(f.Type, path+"."+f.Name); why != "" {
				return why
			}
		}
		return ""
	}
	return fmt.Sprintf("%s is a %s, which holds a pointer", path, t.Kind())
}
