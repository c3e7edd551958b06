package word

import (
	"sync"
	"testing"
	"unsafe"
)

// TestSizes: every size at every aligned offset of a word reads and writes
// just its bytes.
func TestSizes(t *testing.T) {
	for _, size := range []uintptr{1, 2, 4, 8} {
		for off := uintptr(0); off < 8; off += size {
			var mem [2]uint64
			b := unsafe.Slice((*byte)(unsafe.Pointer(&mem[0])), 16)
			for i := range b {
				b[i] = byte(0xa0 + i)
			}
			want := append([]byte(nil), b...)
			p := unsafe.Pointer(&b[off])
			x := uint64(0x0102030405060708) & (1<<(8*size) - 1)
			if size == 8 {
				x = 0x0102030405060708
			}
			Store(p, size, x)
			setPlain(unsafe.Pointer(&want[off]), size, x)
			if string(b) != string(want) {
				t.Fatalf("Store of %d bytes at %d: % x, want % x", size, off, b, want)
			}
			if got := Load(p, size); got != x {
				t.Errorf("Load of %d bytes at %d: %#x, want %#x", size, off, got, x)
			}
			if CompareAndSwap(p, size, x+1, 0) || Load(p, size) != x {
				t.Errorf("CompareAndSwap of %d bytes at %d swapped a value that differed", size, off)
			}
			if !CompareAndSwap(p, size, x, 7) || Load(p, size) != 7 {
				t.Errorf("CompareAndSwap of %d bytes at %d did not swap", size, off)
			}
			setPlain(unsafe.Pointer(&want[off]), size, 7)
			if string(b) != string(want) {
				t.Fatalf("CompareAndSwap of %d bytes at %d: % x, want % x", size, off, b, want)
			}
		}
	}
}

func TestCopy(t *testing.T) {
	var mem [2]uint64
	shared := unsafe.Slice((*byte)(unsafe.Pointer(&mem[0])), 16)
	src := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	for _, n := range []int{1, 2, 3, 4, 8, 11} {
		clear(shared)
		Copy(shared[8-n%8:][:n], src[:n], true) // aligned for 1, 2, 4 and 8
		back := make([]byte, n)
		Copy(back, shared[8-n%8:][:n], false)
		if string(back) != string(src[:n]) {
			t.Errorf("%d bytes there and back: % x", n, back)
		}
	}
}

// TestConcurrent: goroutines add to neighbouring 1- and 2-byte values of
// one word at once with CompareAndSwap; no update is lost (go test -race
// sees no race).
func TestConcurrent(t *testing.T) {
	var mem uint64
	base := unsafe.Pointer(&mem)
	const adds = 2000
	var wg sync.WaitGroup
	for _, v := range []struct{ off, size uintptr }{{0, 1}, {1, 1}, {2, 2}, {4, 2}, {6, 1}, {7, 1}} {
		wg.Go(func() {
			p := unsafe.Add(base, v.off)
			for range adds {
				for {
					old := Load(p, v.size)
					if CompareAndSwap(p, v.size, old, old+1) {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	for _, v := range []struct{ off, size uintptr }{{0, 1}, {1, 1}, {2, 2}, {4, 2}, {6, 1}, {7, 1}} {
		want := uint64(adds) & (1<<(8*v.size) - 1)
		if got := Load(unsafe.Add(base, v.off), v.size); got != want {
			t.Errorf("%d bytes at %d: %d, want %d", v.size, v.off, got, want)
		}
	}
}
