package papers

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// Check-in's agreement (docs/protocol.md, "Agreement"): after every
// check-in vote, the PEs it counted make sure no data line reads stuck at
// 0, that no PE id was started twice, and that they were started for the
// same PE count and run the same program. A stale binary on one PC, or
// one PC started with another PE count, would otherwise check in and
// compute with the others: a wrong answer and exit 0.

// Program returns this executable's identity as check-in compares it: its
// main package path, its module's version and its VCS revision, from the
// build information Go stamps into it, so that PCs that each built the same
// source agree; a hash of the executable's bytes when the build carries
// neither a version nor a revision (go run, go test, -buildvcs=false).
func Program() string { return program() }

var program = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return exeHash()
	}
	s := bi.Path
	var rev, modified string
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			modified = kv.Value
		}
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		s += " " + v
	}
	if rev != "" {
		s += " (rev " + rev[:min(len(rev), 12)]
		if modified == "true" {
			s += ", modified"
		}
		return s + ")"
	}
	if strings.Contains(s, " ") {
		return s
	}
	return s + " (" + exeHash() + ")"
})

// exeHash names the executable by the start of its SHA-256.
func exeHash() string {
	f, err := os.Open(exePath())
	if err != nil {
		return "executable unreadable: " + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "executable unreadable: " + err.Error()
	}
	return "sha256 " + hex.EncodeToString(h.Sum(nil)[:8])
}

func exePath() string {
	if p, err := os.Executable(); err == nil {
		return p
	}
	return os.Args[0]
}

// identity is what a PE says of itself at check-in: its PE count, and its
// program and tag (Config.Tag) as one description of at most 255 bytes.
type peIdentity struct {
	n    int
	desc string
}

// ownIdentity is this PE's identity.
func (p *PE) ownIdentity() peIdentity {
	d := program()
	if p.tag != "" {
		d += ", tag " + fmt.Sprintf("%q", p.tag)
	}
	if len(d) > 255 { // the description crosses the board with a length byte
		d = "…" + d[len(d)-255+len("…"):]
	}
	return peIdentity{n: p.n, desc: d}
}

// word is the identity's digest: the PE count in the top byte, 24 bits of
// the description's SHA-256 below. Two PEs whose words differ differ; two
// whose descriptions differ have equal words once in 2^24.
func (id peIdentity) word() uint64 {
	h := sha256.Sum256([]byte(id.desc))
	return uint64(id.n)<<24 | uint64(binary.BigEndian.Uint32(h[:4])>>8)
}

// agree checks the PEs a check-in vote counted (mask), with NANDs that
// every one of them runs alike whatever its PE count (the vote's width in
// check-in does not depend on it either: vote):
//
//  1. one NAND, every PE driving 0xf: a line that reads low is stuck at 0,
//     would read as a PE in every vote and spoils every step below, which
//     are left out: once the vote reads every PE of the program, it fails
//     as the line test does;
//  2. each counted PE in turn broadcasts a random 16-bit number and its
//     complement (8 NANDs): two PEs with one id broadcast at once, and the
//     two halves then overlap; a bit missing from both is the broadcaster's
//     line stuck at 1;
//  3. the AND and the OR of every PE's identity word (16 NANDs, whatever
//     the PE count): equal when every PE has the same word;
//  4. only when they differ, each counted PE broadcasts its word, which
//     holds its PE count, and where the PE counts agree the first PE of
//     each group of equal words its description, so that every PE can
//     say who differs and how.
//
// Every counted PE sees the same NANDs and fails alike.
func (p *PE) agree(mask uint64) error {
	const op = "check-in"
	r, err := p.nand(op, lpt.DataMask)
	if err != nil {
		return err
	}
	if r != 0 {
		// The vote reads a PE on every line stuck at 0, so the PEs of the
		// program read present: fail as the line test would (every PE
		// there fails alike); until then, wait for more arrivals.
		if mask&p.all() == p.all() {
			return &LineError{PE: p.self, Line: dataPin(bits.TrailingZeros8(r)), Stuck: 0, Faulty: -1, Candidates: p.all()}
		}
		return nil
	}
	for s := mask; s != 0; s &= s - 1 {
		k := bits.TrailingZeros64(s)
		nonce := uint64(rand.Uint32() & 0xffff)
		r, err := p.broadcastWord(k, nonce|^nonce<<16, 32)
		if err != nil {
			return err
		}
		lo, hi := r&0xffff, r>>16
		if lo&hi != 0 {
			return &MismatchError{PE: p.self, What: "PE id", Odd: 1 << k, Detail: fmt.Sprintf("PE id %d was started twice: two PCs run with it, and the board cannot tell them apart; give each PC its own id", k)}
		}
		if lost := ^(lo | hi) & 0xffff; lost != 0 {
			return &LineError{PE: p.self, Line: dataPin(bits.TrailingZeros64(lost) % 4), Stuck: 1, Faulty: k}
		}
	}
	own := p.ownIdentity()
	w := own.word()
	and, err := p.boardBits(w, 32)
	if err != nil {
		return err
	}
	or, err := p.boardBits(^w, 32)
	if err != nil {
		return err
	}
	if ^and&maskOf(32) == or {
		return nil
	}
	// Every PE's word (8 NANDs each) gives the PE counts and the groups;
	// only for PEs of one PE count does the first PE of each group send
	// its description.
	words := make(map[int]uint64, bits.OnesCount64(mask))
	counts := uint64(0)
	for s := mask; s != 0; s &= s - 1 {
		k := bits.TrailingZeros64(s)
		x, err := p.broadcastWord(k, w, 32)
		if err != nil {
			return err
		}
		words[k] = x
		counts |= 1 << (x >> 24 & 63)
	}
	descs := map[uint64]string{}
	for s := mask; s != 0 && counts&(counts-1) == 0; s &= s - 1 {
		k := bits.TrailingZeros64(s)
		if _, ok := descs[words[k]]; !ok {
			d, err := p.broadcastDesc(k, own.desc)
			if err != nil {
				return err
			}
			descs[words[k]] = d
		}
	}
	ids := make(map[int]peIdentity, len(words))
	for k, x := range words {
		ids[k] = peIdentity{n: int(x >> 24), desc: descs[x]}
	}
	return p.mismatch(ids)
}

// dataPin is data line Di.
func dataPin(i int) lpt.Line {
	l, _ := lpt.LineFor(lpt.Data, 1<<i)
	return l
}

// broadcastDesc sends root's description to every counted PE: its length,
// then the description, a byte at a time.
func (p *PE) broadcastDesc(root int, own string) (string, error) {
	l, err := p.broadcastWord(root, uint64(len(own)), 8)
	if err != nil {
		return "", err
	}
	b := make([]byte, l)
	for i := range b {
		var c byte
		if p.self == root {
			c = own[i]
		}
		x, err := p.broadcastWord(root, uint64(c), 8)
		if err != nil {
			return "", err
		}
		b[i] = byte(x)
	}
	return string(b), nil
}

// broadcastWord is broadcastBits for check-in, on the board's NANDs alone:
// no census, no count of the program's calls.
func (p *PE) broadcastWord(root int, x uint64, w int) (uint64, error) {
	if p.self == root {
		x = ^x
	} else {
		x = ^uint64(0)
	}
	return p.boardBits(x, w)
}

// boardBits is nandBits for check-in (see broadcastWord).
func (p *PE) boardBits(x uint64, w int) (uint64, error) {
	var r uint64
	for k := 0; k < w; k += 4 {
		y, err := p.nand("check-in", uint8(x>>k)&lpt.DataMask)
		if err != nil {
			return 0, err
		}
		r |= uint64(y) << k
	}
	return r & maskOf(w), nil
}

// mismatch names the PEs whose identities differ from the most common one:
// by PE count first, for the PEs of one PE count by program.
func (p *PE) mismatch(ids map[int]peIdentity) error {
	e := &MismatchError{PE: p.self, What: "PE count"}
	groups := groupBy(ids, func(id peIdentity) string { return fmt.Sprint(id.n) })
	if len(groups) > 1 {
		e.Detail = describe(groups, func(g uint64, first bool) string {
			n := ids[bits.TrailingZeros64(g)].n
			if !first {
				return fmt.Sprintf("%s for %d", lpt.PESet(g), n)
			}
			verb := " was"
			if bits.OnesCount64(g) > 1 {
				verb = " were"
			}
			return fmt.Sprintf("%s%s started for %d PEs", lpt.PESet(g), verb, n)
		}, &e.Odd) + ": start every PE with the same PE count"
		return e
	}
	e.What = "program"
	groups = groupBy(ids, func(id peIdentity) string { return id.desc })
	e.Detail = describe(groups, func(g uint64, _ bool) string {
		verb := " runs "
		if bits.OnesCount64(g) > 1 {
			verb = " run "
		}
		return lpt.PESet(g).String() + verb + ids[bits.TrailingZeros64(g)].desc
	}, &e.Odd) + ": run the same program, built from the same source, with the same tag, on every PC"
	return e
}

// describe joins what part says of each group, the groups that differ
// from the largest first, and sets odd to their PEs.
func describe(groups []uint64, part func(g uint64, first bool) string, odd *uint64) string {
	order := append(groups[1:len(groups):len(groups)], groups[0])
	parts := make([]string, len(order))
	for i, g := range order {
		parts[i] = part(g, i == 0)
		if i < len(order)-1 {
			*odd |= g
		}
	}
	return strings.Join(parts, "; ")
}

// groupBy groups the PEs of ids by key, the largest group first, then the
// one with the lowest PE.
func groupBy(ids map[int]peIdentity, key func(peIdentity) string) []uint64 {
	byKey := map[string]uint64{}
	for k, id := range ids {
		byKey[key(id)] |= 1 << k
	}
	groups := make([]uint64, 0, len(byKey))
	for _, g := range byKey {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b uint64) int {
		return cmp.Or(bits.OnesCount64(b)-bits.OnesCount64(a), bits.TrailingZeros64(a)-bits.TrailingZeros64(b))
	})
	return groups
}

// MismatchError reports PEs that check-in refused to run together: started
// for different PE counts, running different programs (or tags), or one
// PE id started on two PCs. Every PE that checked in reports it alike.
type MismatchError struct {
	PE     int    // the PE that found it
	What   string // what differs: "PE count", "program" or "PE id"
	Odd    uint64 // the PEs that differ from the most (bit k: PE k), or the id started twice
	Detail string // who differs and how, and the fix
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("papers: PE %d: check-in: %s", e.PE, e.Detail)
}

// ErrorPE is the PE the error is about.
func (e *MismatchError) ErrorPE() int { return e.PE }
