package vcd_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/vcd"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
)

// nandWrapped runs a check-in and one NAND (PE k contributes 3<<k) on
// PEs 0 and 1 of an untimed board through recorded ports.
func nandWrapped(t *testing.T, b *emu.Board, rec *vcd.Recorder) []uint8 {
	t.Helper()
	results := make([]uint8, 2)
	var wg sync.WaitGroup
	for k := range 2 {
		port, err := b.Port(k)
		if err != nil {
			t.Fatal(err)
		}
		wrapped, err := rec.Wrap(k, port)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			p, err := papers.Open(wrapped, papers.Config{PE: k, PEs: 2, Timeout: 10 * time.Second})
			if err != nil {
				t.Error(err)
				return
			}
			defer p.Close()
			if results[k], err = p.NAND(uint8(0x3 << k)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	return results
}

// TestRecordVCDUntimed records an untimed run through wrapped ports: one
// time step per operation, each PC's status as it read it, and each PC's
// port lines as other names for the nets at its connector.
func TestRecordVCDUntimed(t *testing.T) {
	b, err := emu.New(2)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec, err := vcd.NewRecorder(&buf, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Wrap(4, nil); err == nil {
		t.Error("wrapping PE 4 of a 4-connector board accepted")
	}
	results := nandWrapped(t, b, rec)
	ops := rec.Ops()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := vcd.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if f.End != ops+1 {
		t.Errorf("the file ends at step %d after %d operations, want %d", f.End, ops, ops+1)
	}
	reads := 0
	for k := range 2 {
		reads += len(f.Signal(fmt.Sprintf("pc.PE%d.read", k)).Changes)
		for i, c := range f.Signal(fmt.Sprintf("pc.PE%d.nError", k)).Changes {
			if board := f.Signal("board.I0").Changes[i]; c != board {
				t.Fatalf("PE %d's nError change %d is %v, the board's I0 %v: they are one net", k, i, c, board)
			}
		}
	}
	if reads == 0 || int64(reads) >= ops {
		t.Errorf("%d reads among %d operations", reads, ops)
	}
	if results[0] != ^uint8(0x3&0x6)&lpt.DataMask || results[1] != results[0] {
		t.Errorf("NAND results %#x, want %#x on both", results, ^uint8(0x2)&lpt.DataMask)
	}
}
