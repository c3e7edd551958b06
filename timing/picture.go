package timing

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/ttlpapers/ttlpapers/emu/vcd"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// Focus picks the operation a picture of trial r shows: the first wrong
// result if there is one (its PE and operation), else PE 0's first
// operation.
func Focus(r *TrialResult) (pe, op int) {
	if len(r.Wrong) > 0 {
		return r.Wrong[0].PE, r.Wrong[0].Index
	}
	return 0, 0
}

// Picture lays out the waveform of PE k's operation i in a recorded trial
// r of a NAND variant: the last PE to arrive flipping its strobes and
// changing a data bit at its PC, the change reaching the board, the NAND
// output and the ready path (the strobe trees, the flip-flop, the Busy
// buffer), and both arriving at PE k, which reads its status — marked,
// with the instant the last PE wrote, and, when the variant resamples, the
// read that first saw ready. The data bit shown is the first wrong one,
// else the first the ready read got wrong, else bit 0.
func Picture(r *TrialResult, k, i int, title string) (vcd.Plot, error) {
	if k < 0 || k >= len(r.Reads) || i < 0 || i >= len(r.Reads[k]) {
		return vcd.Plot{}, fmt.Errorf("timing: trial %d has no operation %d on PE %d", r.Trial, i, k)
	}
	j := lastWriter(r, i)
	rd := r.Reads[k][i]
	bit := shownBit(rd)
	size, err := hw.SizeFor(len(r.Reads))
	if err != nil {
		return vcd.Plot{}, err
	}
	h := hw.MustNew(size)
	in, _ := lpt.LineFor(lpt.Status, 1<<(lpt.InputShift+bit))
	line := in.Name
	pc := func(pe int, l string) string { return fmt.Sprintf("pc.PE%d.%s", pe, l) }
	board := func(net string) string { return "board." + net }
	return vcd.Plot{
		Title:  title,
		From:   int64(r.Arrivals[j][i] - 100*time.Nanosecond),
		To:     int64(rd.At + 300*time.Nanosecond),
		Origin: int64(r.Arrivals[j][i]),
		Axis:   fmt.Sprintf("ns after PE %d's write", j),
		Marks:  readMarks(rd, k, j, r.Arrivals[j][i]),
		Rows: []vcd.Row{
			{Label: fmt.Sprintf("PE %d drives D%d", j, bit), Path: pc(j, fmt.Sprintf("D%d", bit))},
			{Label: fmt.Sprintf("PE %d drives D6 (S0)", j), Path: pc(j, "D6")},
			{Label: fmt.Sprintf("PE %d drives D7 (S1)", j), Path: pc(j, "D7")},
			{Label: fmt.Sprintf("board: PE %d's D%d", j, bit), Path: board(hw.CableNet(j, fmt.Sprintf("D%d", bit)))},
			{Label: fmt.Sprintf("board: NAND bit %d (74LS40)", bit), Path: board(h.InputNet(bit, k))},
			{Label: "board: nALL_S0 (74LS20)", Path: board(hw.NetAllS0)},
			{Label: "board: nALL_S1 (74LS20)", Path: board(hw.NetAllS1)},
			{Label: "board: RDYQ (74LS74)", Path: board(hw.NetRDYQ)},
			{Label: fmt.Sprintf("board: PE %d's Busy (74LS125)", k), Path: board(hw.CableNet(k, "Busy"))},
			{Label: fmt.Sprintf("PE %d sees Busy", k), Path: pc(k, "Busy")},
			{Label: fmt.Sprintf("PE %d sees %s (bit %d)", k, line, bit), Path: pc(k, line)},
			{Label: fmt.Sprintf("PE %d's status reads", k), Path: pc(k, "status")},
			{Label: fmt.Sprintf("PE %d's port reads", k), Path: pc(k, "read")},
		},
	}, nil
}

// lastWriter is the PE whose write came last in operation i of trial r.
func lastWriter(r *TrialResult, i int) int {
	j := 0
	for pe := range r.Arrivals {
		if r.Arrivals[pe][i] > r.Arrivals[j][i] {
			j = pe
		}
	}
	return j
}

// shownBit is the data bit a picture of read rd shows: the first wrong
// one, else the first the ready read got wrong, else bit 0.
func shownBit(rd Read) int {
	if d := rd.Got ^ rd.Want; d != 0 {
		return bits.TrailingZeros8(d)
	}
	if d := rd.ReadyGot ^ rd.Want; rd.Ready >= 0 && d != 0 {
		return bits.TrailingZeros8(d)
	}
	return 0
}

// readMarks marks the instant PE j, the last, wrote (at), and when PE k
// saw ready and read, with what it read against what it should have.
func readMarks(rd Read, k, j int, at time.Duration) []vcd.Mark {
	marks := []vcd.Mark{{T: int64(at), Label: fmt.Sprintf("PE %d writes", j)}}
	verdict := "right"
	if rd.Got != rd.Want {
		verdict = fmt.Sprintf("should be %04b", rd.Want)
	}
	if rd.Ready >= 0 && rd.Ready != rd.At {
		return append(marks, vcd.Mark{T: int64(rd.Ready), Label: fmt.Sprintf("PE %d sees ready: NAND %04b", k, rd.ReadyGot)},
			vcd.Mark{T: int64(rd.At), Label: fmt.Sprintf("resamples: NAND %04b, %s", rd.Got, verdict)})
	}
	return append(marks, vcd.Mark{T: int64(rd.At), Label: fmt.Sprintf("PE %d sees ready: NAND %04b, %s", k, rd.Got, verdict)})
}
