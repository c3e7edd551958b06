package papers

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
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
	"github.com/ttlpapers/ttlpapers/peset"
)

// Check-in's agreement (docs/protocol.md, "Agreement"): every acknowledge
// in check-in compares a short digest of each PE's PE count, program and
// tag, and after every check-in vote the PEs it counted make sure that no
// PE id was started twice, and, only when the digests differed, find who
// differs and how. A stale binary on one PC, or one PC started with
// another PE count, would otherwise check in and compute with the others:
// a wrong answer and exit 0.

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

// peIdentity is what a PE says of itself at check-in: its PE count, and
// its program and tag (Config.Tag) as one description of at most 255
// bytes.
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

// digestBits is the width of the digest every acknowledge in check-in
// compares (compareIdentity): two PEs whose PE count, program or tag
// differ pass as alike once in 2^16 check-ins.
const digestBits = 16

// digest is the identity's digest: the first digestBits bits of the
// SHA-256 of its PE count and description.
func (id peIdentity) digest() uint64 {
	h := sha256.Sum256(fmt.Appendf(nil, "%d %s", id.n, id.desc))
	return uint64(binary.BigEndian.Uint16(h[:]))
}

// compareIdentity is check-in's first step of every acknowledge, before
// its vote, which it keeps in step whatever the PEs' counts: the AND and
// the OR of every PE's digest (digestBits/2 NANDs, the same for every
// PE), equal when every PE has the same digest, then one anyPE, so that
// every PE decides alike (a PE whose own status input is stuck reads the
// digests as different, alone). A data line stuck at 0 makes them differ
// too: when they differ (PE.odd), probeInputs tells these apart. Votes in
// check-in then cover every id the board can have, so that PEs started
// for other PE counts stay in step and are counted, and agree names them.
func (p *PE) compareIdentity() error {
	const op = "check-in"
	w := p.ident.digest()
	and, err := p.boardBits(w, digestBits)
	if err != nil {
		return err
	}
	or, err := p.boardBits(^w, digestBits)
	if err != nil {
		return err
	}
	p.stuck, p.misread = 0, nil
	if p.odd, err = p.anyPE(op, ^and&maskOf(digestBits) != or); err != nil || !p.odd {
		return err
	}
	if err = p.probeInputs(); errors.As(err, &p.misread) {
		return nil // agree reports it after the vote (waitForOthers)
	}
	return err
}

// dupBits is the width of the random number each PE broadcasts at every
// check-in vote (agree): two PCs started with one id pass one vote
// unnoticed once in 2^8.
const dupBits = 8

// agree checks the PEs a check-in vote counted (mask), with NANDs that
// every one of them runs alike, after compareIdentity:
//
//  1. a line that probeInputs read stuck at 0 at the board reads as a
//     PE in every vote and spoils every step below: once the vote reads
//     every PE of the program, check-in fails as the line test does
//     (unless the caller tests the lines itself, Config.NoLineTest);
//     until then, it waits for more arrivals;
//  2. when the digests differ and no line is stuck, each counted PE
//     broadcasts its PE count and digest, and where the PE counts agree the first PE of
//     each group of equal digests its description, so that every PE can
//     say who differs and how;
//  3. else each counted PE in turn broadcasts a random number and its
//     complement (dupBits/2 NANDs): two PEs with one id broadcast at
//     once, and the two halves then overlap; a bit missing from both is
//     the broadcaster's line stuck at 1.
//
// Every counted PE sees the same NANDs and fails alike.
func (p *PE) agree(mask peset.Set) error {
	switch {
	case p.misread != nil:
		return p.misread
	case p.stuck != 0 && (mask&p.all() != p.all() || p.noLineTest):
		return nil
	case p.stuck != 0:
		return &LineError{PE: p.self, Line: dataPin(bits.TrailingZeros8(p.stuck)), Stuck: 0, Faulty: -1, Candidates: p.all(), Op: "check-in"}
	case p.odd:
		return p.nameOdd(mask)
	}
	for _, k := range mask.Members() {
		nonce := p.draw() & maskOf(dupBits)
		r, err := p.broadcastWord(k, nonce|^nonce<<dupBits, 2*dupBits)
		if err != nil {
			return err
		}
		lo, hi := r&maskOf(dupBits), r>>dupBits
		if lo&hi != 0 {
			// On a board with as many ports as PEs another id is missing:
			// the others are here once the vote counts all but one.
			return &MismatchError{PE: p.self, What: "PE id", Odd: peset.Of(k), Detail: fmt.Sprintf("PE id %d was started twice: two PCs run with it, and the board cannot tell them apart; give each PC its own id", k), among: p.all(), need: p.n - 1}
		}
		if lost := ^(lo | hi) & maskOf(dupBits); lost != 0 && !p.noLineTest {
			return &LineError{PE: p.self, Line: dataPin(bits.TrailingZeros64(lost) % 4), Stuck: 1, Faulty: k, Op: "check-in"}
		}
	}
	return nil
}

// draw is a random number from Config.Rand, or the global source.
func (p *PE) draw() uint64 {
	if p.rand != nil {
		return p.rand.Uint64()
	}
	return rand.Uint64()
}

// waitForOthers reports whether check-in's failure err, found after a
// vote that counted mask, waits for more PEs, so that the PEs still to
// come find it too instead of waiting out their check-in on the ports of
// PEs that have ended: a mismatch until its majority is here, a status
// input until the PEs that read the board right say that every PE is
// (the PEs that read it wrong read the vote wrong too).
func (p *PE) waitForOthers(err error, mask peset.Set) (bool, error) {
	var me *MismatchError
	var ie *InputError
	switch {
	case errors.As(err, &me):
		return (mask & me.among).Len() < me.need, nil
	case errors.As(err, &ie):
		waiting, err := p.whoPEs("check-in", mask&p.all() != p.all(), lpt.MaxPEs)
		return waiting&^ie.Faulty != 0, err
	}
	return false, nil
}

// nameOdd names, after compareIdentity found the digests differ, who
// differs and how. Every PE's PE count and digest (6 NANDs each) give the
// groups; only for PEs of one PE count does the first PE of each group
// send its description.
func (p *PE) nameOdd(mask peset.Set) error {
	words := make(map[int]uint64, mask.Len())
	counts := uint64(0)
	for _, k := range mask.Members() {
		x, err := p.broadcastWord(k, uint64(p.n)<<digestBits|p.ident.digest(), 24)
		if err != nil {
			return err
		}
		words[k] = x
		counts |= 1 << (x >> digestBits & 63)
	}
	descs := map[uint64]string{}
	for _, k := range mask.Members() {
		if counts&(counts-1) != 0 {
			break
		}
		if _, ok := descs[words[k]]; !ok {
			d, err := p.broadcastDesc(k, p.ident.desc)
			if err != nil {
				return err
			}
			descs[words[k]] = d
		}
	}
	ids := make(map[int]peIdentity, len(words))
	for k, x := range words {
		ids[k] = peIdentity{n: int(x >> digestBits), desc: descs[x]}
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
	// Fail once every PE of the majority's count is here; without a
	// majority, at the check-in's end.
	e.among, e.need = ^peset.Set(0), lpt.MaxPEs+1
	if 2*groups[0].Len() > len(ids) {
		n := ids[groups[0].Members()[0]].n
		e.among, e.need = 1<<n-1, n
	}
	if len(groups) > 1 {
		e.Detail = describe(groups, func(g peset.Set, first bool) string {
			n := ids[g.Members()[0]].n
			if !first {
				return fmt.Sprintf("%s for %d", g, n)
			}
			verb := " was"
			if g.Len() > 1 {
				verb = " were"
			}
			return fmt.Sprintf("%s%s started for %d PEs", g, verb, n)
		}, &e.Odd) + ": start every PE with the same PE count"
		return e
	}
	e.What = "program"
	groups = groupBy(ids, func(id peIdentity) string { return id.desc })
	if len(groups) == 1 {
		return nil // the digests differed on a board that changed meanwhile (a PE of an earlier run in the acknowledge): the next vote counts again
	}
	e.Detail = describe(groups, func(g peset.Set, _ bool) string {
		verb := " runs "
		if g.Len() > 1 {
			verb = " run "
		}
		return g.String() + verb + ids[g.Members()[0]].desc
	}, &e.Odd) + ": run the same program, built from the same source, with the same tag, on every PC"
	return e
}

// describe joins what part says of each group, the groups that differ
// from the largest first, and sets odd to their PEs.
func describe(groups []peset.Set, part func(g peset.Set, first bool) string, odd *peset.Set) string {
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
func groupBy(ids map[int]peIdentity, key func(peIdentity) string) []peset.Set {
	byKey := map[string]peset.Set{}
	for k, id := range ids {
		byKey[key(id)] |= 1 << k
	}
	groups := make([]peset.Set, 0, len(byKey))
	for _, g := range byKey {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b peset.Set) int {
		return cmp.Or(b.Len()-a.Len(), a.Members()[0]-b.Members()[0])
	})
	return groups
}

// MismatchError reports PEs that check-in refused to run together: started
// for different PE counts, running different programs (or tags), or one
// PE id started on two PCs. Every PE that checked in reports it alike.
type MismatchError struct {
	PE     int       // the PE that found it
	What   string    // what differs: "PE count", "program" or "PE id"
	Odd    peset.Set // the PEs that differ from the most, or the id started twice
	Detail string    // who differs and how, and the fix

	// Check-in fails once a vote counts need of the ids among, so that
	// the PEs still to come find it too, and not ports held by PEs that
	// have ended.
	among peset.Set
	need  int
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("papers: PE %d: check-in: %s", e.PE, e.Detail)
}

// ErrorPE is the PE the error is about.
func (e *MismatchError) ErrorPE() int { return e.PE }
