package papers

import (
	"cmp"
	"fmt"

	"github.com/ttlpapers/ttlpapers/peset"
)

// Count says how many PEs contributed to a result: SPIDER's delivered/total
// (Birsan 1995, §5.2.1: the combine agents keep "the number of agents it
// combines with", and the root passes the data on "when the total count
// coincides with the number of nodes"). Total is the program's PE count;
// Delivered counts the PEs whose values are in the result; Missing names
// the others — departed PEs, and PEs the board did not hear from (a cable
// pulled mid-run, which nothing announces).
type Count struct {
	Delivered int
	Total     int
	Missing   peset.Set // the PEs that did not contribute
}

// Complete reports whether every PE contributed.
func (c Count) Complete() bool { return c.Delivered == c.Total }

// String is "delivered/total", naming the missing PEs: "3/4 (PE 2
// missing)".
func (c Count) String() string {
	if c.Missing == 0 {
		return fmt.Sprintf("%d/%d", c.Delivered, c.Total)
	}
	return fmt.Sprintf("%d/%d (%s missing)", c.Delivered, c.Total, c.Missing)
}

// counted runs f, a collective, over the PEs that take part and that the
// board hears from now: first a vote in which every PE says "I am here"
// (ceil(n/4) NANDs; a transparent or unplugged PE reads as absent), which
// narrows the participants for f; then f; then the Count. bad is f's
// argument check, made before any NAND.
func (p *PE) counted(bad error, f func() error) (Count, error) {
	if bad != nil {
		return Count{}, bad
	}
	here, err := p.vote("presence vote", true)
	if err != nil {
		return Count{}, err
	}
	saved, ints := p.members, p.stats.Interrupts
	p.members &= here
	c := Count{Delivered: p.members.Len(), Total: p.n, Missing: p.all() &^ p.members}
	err = f()
	if p.stats.Interrupts == ints { // an interrupt set the participants anew
		p.members = saved
	}
	return c, err
}

// ReduceCount is Reduce, plus how many PEs contributed: a vote first finds
// the PEs the board hears from (ceil(n/4) NANDs more than Reduce), and the
// reduction combines exactly those.
func ReduceCount[T Number](p *PE, op Op, v T) (r T, c Count, err error) {
	defer p.end(&err)
	p.due("ReduceCount")
	c, err = p.counted(p.checkOp("ReduceCount", op, kindOf[T]()), func() (err error) { r, err = Reduce(p, op, v); return err })
	return r, c, err
}

// ScanCount is Scan, plus how many PEs contributed (see ReduceCount).
func ScanCount[T Number](p *PE, op Op, v T, kind ScanKind) (r T, c Count, err error) {
	defer p.end(&err)
	p.due("ScanCount")
	c, err = p.counted(cmp.Or(p.checkOp("ScanCount", op, kindOf[T]()), p.checkKind("ScanCount", kind)), func() (err error) { r, err = Scan(p, op, v, kind); return err })
	return r, c, err
}

// ReduceFuncCount is ReduceFunc, plus how many PEs contributed (see
// ReduceCount).
func ReduceFuncCount[T any](p *PE, v T, combine func(a, b T) T) (r T, c Count, err error) {
	defer p.end(&err)
	p.due("ReduceFuncCount")
	c, err = p.counted(p.checkFunc("ReduceFuncCount", checkPlain[T](), combine == nil), func() (err error) { r, err = ReduceFunc(p, v, combine); return err })
	return r, c, err
}

// ScanFuncCount is ScanFunc, plus how many PEs contributed (see
// ReduceCount).
func ScanFuncCount[T any](p *PE, v T, combine func(a, b T) T, identity T, kind ScanKind) (r T, c Count, err error) {
	defer p.end(&err)
	p.due("ScanFuncCount")
	c, err = p.counted(cmp.Or(p.checkFunc("ScanFuncCount", checkPlain[T](), combine == nil), p.checkKind("ScanFuncCount", kind)), func() (err error) {
		r, err = ScanFunc(p, v, combine, identity, kind)
		return err
	})
	return r, c, err
}
