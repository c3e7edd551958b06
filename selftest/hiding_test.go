package selftest

import (
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// stuckPair is two stuck lines on different PEs.
type stuckPair [2]hypothesis

// stuckPairs lists every pair of stuck lines (17 lines, at 0 or at 1) on
// different PEs of a cluster's rig.
func stuckPairs(s *signatures) []stuckPair {
	var stuck []hypothesis
	for _, x := range s.hyps {
		if x.kind == "stuck0" || x.kind == "stuck1" {
			stuck = append(stuck, x)
		}
	}
	var ps []stuckPair
	for i, a := range stuck {
		for _, b := range stuck[i+1:] {
			if a.pe != b.pe {
				ps = append(ps, stuckPair{a, b})
			}
		}
	}
	return ps
}

// TestTwoStuckLinesNeverOneFault runs the wiring diagnosis on two stuck
// lines on different PEs of a 4-PE cluster — 210 pairs drawn at random
// in CI, or $TTLPAPERS_RUN_TRIALS of them, every one of the
// 6936 from that many up — and checks that no report claims the readings
// match a single fault that is not there without saying that it may hide
// a second one and naming it (or, for a line the board does not connect,
// listing it as not checkable). Of the readings no single fault gives, a
// few (100 when $TTLPAPERS_RUN_TRIALS is set) are diagnosed in full — the
// search for pairs is slow — and a report of two faults at once must name
// the pair that is there.
func TestTwoStuckLinesNeverOneFault(t *testing.T) {
	testenv.Long(t, "diagnosing pairs of stuck lines")
	pes := []int{0, 1, 2, 3}
	h := hw.MustNew(len(pes))
	s := predict(len(pes), pes, true)
	if s.err != nil {
		t.Fatal(s.err)
	}
	invisible := s.invisible()
	all := stuckPairs(s)
	n := testenv.Trials(t, 210)
	full := 3 // readings no single fault gives, diagnosed in full (slow)
	if os.Getenv(testenv.EnvTrials) != "" {
		full = 100
	}
	seed := uint64(time.Now().UnixNano())
	pairs := all
	if n < len(all) {
		rng := rand.New(rand.NewPCG(seed, 26))
		pairs = nil
		for _, i := range rng.Perm(len(all))[:n] {
			pairs = append(pairs, all[i])
		}
	}
	var single, warned, asPair, pairFound, noSingle, unseen int
	start := time.Now()
	for _, p := range pairs {
		faults := []emu.Fault{p[0].faults[0], p[1].faults[0]}
		obs, err := simulate(h, pes, true, faults, nil)
		if err != nil {
			t.Fatal(err)
		}
		if distance(obs, s.healthy) == 0 {
			unseen++ // both read like a healthy board: listed as not checkable
			continue
		}
		if _, exact := s.diagnose(obs); !exact && noSingle+asPair >= full {
			continue
		}
		c := s.diagnosis(h, pes, true, obs)
		switch {
		case strings.HasPrefix(c.Detail, "these readings match"):
			single++
			var missed []string
			for _, x := range p {
				if !slices.Contains(c.Suspects, x.String()) && !slices.Contains(c.MayHide, x.String()) && !slices.ContainsFunc(invisible, func(y hypothesis) bool { return y.String() == x.String() }) {
					missed = append(missed, x.String())
				}
			}
			if len(missed) > 0 {
				t.Errorf("seed %d: %v: the report claims a single fault, and neither matches nor warns of %v: %s: %s", seed, faults, missed, c.Name, c.Detail)
			}
			if len(c.MayHide) > 0 {
				warned++
			}
		case strings.HasPrefix(c.Name, "diagnosis: two faults at once"):
			asPair++
			if slices.Contains(c.Suspects, p[0].String()) && slices.Contains(c.Suspects, p[1].String()) {
				pairFound++
			} else {
				t.Logf("seed %d: %v: diagnosed as another pair: %s", seed, faults, c.Name)
			}
		default:
			noSingle++
		}
	}
	t.Logf("%d pairs of stuck lines in %v: %d read as one fault (%d of them with the warning and the hidden fault named, the rest hiding only a line the board does not connect), %d of the others diagnosed in full: %d as two faults at once (%d naming the pair injected), %d as no single fault (closest listed); %d unseen",
		len(pairs), time.Since(start).Round(time.Millisecond), single, warned, asPair+noSingle, asPair, pairFound, noSingle, unseen)
}

// stallAccount is how the emulator's oracle names a PE that held a wait
// up: real readings cannot always tell that much.
var stallAccount = regexp.MustCompile(`PE \d+ (holds|has not arrived)`)

// TestCheckInAgreesWithDiagnosis: when the wiring probe found a fault, the
// check-in and driver rows carry its diagnosis and never name a PE of
// their own — with D6 stuck at 0 the check-in once named the faulty PE
// (the emulator knows it) while the diagnosis said the PEs cannot be told
// apart. And a fault that may hide another says so on every row.
func TestCheckInAgreesWithDiagnosis(t *testing.T) {
	line := func(n string) lpt.Line { return lineNamed(n) }
	for _, faults := range [][]emu.Fault{
		{{PE: 1, Line: line("D6"), Kind: emu.Stuck0}},
		{{PE: 1, Line: line("D6"), Kind: emu.Stuck0}, {PE: 2, Line: line("D7"), Kind: emu.Stuck1}},
		{{PE: 2, Line: line("D7"), Kind: emu.Stuck0}},
		{{PE: 3, Line: line("nAutoFd"), Kind: emu.Stuck0}, {PE: 0, Line: line("nStrobe"), Kind: emu.Stuck1}},
	} {
		r := runJSON(t, Config{PEs: 4, Faults: faults})
		var diag *jsonCheck
		for i, c := range r.Checks {
			if strings.HasPrefix(c.Name, "diagnosis:") {
				diag = &r.Checks[i]
			}
		}
		if diag == nil {
			t.Fatalf("%v: no diagnosis:%s", faults, dump(r))
		}
		if len(faults) == 2 && !slices.Contains(diag.MayHide, faults[1].String()) {
			t.Errorf("%v: diagnosis %q does not warn of the second fault (may hide %v)", faults, diag.Name, diag.MayHide)
		}
		driverRows := 0
		for _, c := range r.Checks {
			own, _, carries := strings.Cut(c.Detail, " — "+diag.Name)
			if c.Status != StatusFail || !carries {
				continue
			}
			if !slices.Equal(c.PEs, diag.PEs) {
				t.Errorf("%v: row %q names PEs %v, the diagnosis %v", faults, c.Name, c.PEs, diag.PEs)
			}
			if strings.HasPrefix(c.Name, "check-in") || c.Name == "driver checks" {
				driverRows++
				if stallAccount.MatchString(own) {
					t.Errorf("%v: row %q names who stalled (%q) beside the diagnosis %q", faults, c.Name, own, diag.Name)
				}
			}
		}
		t.Logf("%v: %s (%d check-in/driver rows carry it)", faults, diag.Name, driverRows)
	}
}
