package splitc

// Reads and writes of plain data in spread arrays, when the data network
// reaches other PEs' memory without their handlers (am.Direct: in-process
// the PEs share the address space; under MPI, windows). A spread array is
// then allocated there, and read, write, get, put and the bulk forms of
// those move the data one-sided, complete when they return (which
// Libsplit-C's completion rules allow: a get or put may complete before
// its sync); a scalar moves as one atomic word (package word), so that the
// owner's atomic procedures, which compare and swap, are never split by a
// put. A bulk store is a one-sided copy and a message that counts its
// bytes on the owner (store_sync). Scalar stores, whose owner counts them,
// and the atomics, which run on the owner, stay active messages; so do
// accesses the owner must judge (out of range, ToGlobal memory).

import (
	"unsafe"

	"github.com/ttlpapers/ttlpapers/am"
)

// directPolls: a PE that only reads and writes one-sided still answers the
// others' messages (every blocking call of Split-C polls), at this rate.
const directPolls = 16

// direct returns dir's region and offset of size bytes at addr, when addr
// is in a spread array dir reaches and within it (the array's parts are
// the same size on every PE, so this PE's part says).
func (m *Memory) direct(addr uint64, size uintptr) (region, off int, ok bool) {
	if m.dir == nil || addr>>offsetBits > uint64(len(m.segs)) {
		return 0, 0, false
	}
	sg := m.segment(addr)
	o := addr & (1<<offsetBits - 1)
	if sg == nil || sg.region == 0 || o+uint64(size) > uint64(len(sg.mem)) {
		return 0, 0, false
	}
	return sg.region - 1, int(o), true
}

// poll polls the network every directPolls one-sided operations.
func (m *Memory) poll() error {
	if m.polls++; m.polls < directPolls {
		return nil
	}
	m.polls = 0
	_, err := m.ep.Poll(am.PollBoth, false)
	return err
}

// directGet reads size bytes at addr on PE pe into the counter's val and
// dst (if not nil).
func directGet[T Number](m *Memory, op string, pe int32, region, off int, dst *T, ctr *Counter) error {
	size := unsafe.Sizeof(*new(T))
	if err := m.dir.Get(int(pe), region, off, m.scratch[:size]); err != nil {
		return m.errorf("%s: %w", op, err)
	}
	p := unsafe.Pointer(&m.scratch[0])
	ctr.val = load(p, size)
	if dst != nil {
		*dst = *(*T)(p)
	}
	return m.poll()
}

func directPut[T Number](m *Memory, op string, pe int32, region, off int, v T) error {
	size := unsafe.Sizeof(v)
	*(*T)(unsafe.Pointer(&m.scratch[0])) = v
	if err := m.dir.Put(int(pe), region, off, m.scratch[:size]); err != nil {
		return m.errorf("%s: %w", op, err)
	}
	return m.poll()
}
