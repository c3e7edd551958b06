package queue

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/internal/word"
)

// One-sided access (Direct) where the PEs share memory: in process, and
// between the processes of one machine (am/shmnet). A region is memory
// its PE's handlers also touch, so a word moves atomically (package word):
// an atomic procedure the owner runs on it, which compares and swaps, is
// never split by a put. Longer data move byte by byte, as a bulk
// transfer's may.

// Regions is a transport whose PEs' regions this process reaches.
type Regions interface {
	// Region returns PE pe's region r from off on, n bytes of it: an
	// error naming the PE when it has left, or has no such bytes.
	Region(pe, r, off, n int) ([]byte, error)
}

// Get copies PE pe's bytes in region r from off on into dst.
func Get(t Regions, pe, r, off int, dst []byte) error {
	mem, err := t.Region(pe, r, off, len(dst))
	if err == nil {
		word.Copy(dst, mem, false)
	}
	return err
}

// Put copies src into PE pe's region r from off on.
func Put(t Regions, pe, r, off int, src []byte) error {
	mem, err := t.Region(pe, r, off, len(src))
	if err == nil {
		word.Copy(mem, src, true)
	}
	return err
}

// Within returns n bytes of mem, PE pe's region r, from off on.
func Within(mem []byte, pe, r, off, n int) ([]byte, error) {
	if mem == nil || off < 0 || off+n > len(mem) {
		return nil, fmt.Errorf("PE %d has no bytes %d to %d in region %d (not allocated there yet, freed, or out of range)", pe, off, off+n, r)
	}
	return mem[off : off+n], nil
}
