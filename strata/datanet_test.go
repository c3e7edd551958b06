package strata_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/strata"
)

func runStrata(t *testing.T, n int, fn func(s *strata.S) error) {
	t.Helper()
	if err := emulate.Run(n, papers.Config{Timeout: 20 * time.Second}, strata.Program(fn)); err != nil {
		t.Fatal(err)
	}
}

// TestSeedActiveMessages sends with every Send… of §6 and receives with
// every Poll… of §6.2: each PE sends a message of each kind to the next,
// whose handler adds up its arguments.
func TestSeedActiveMessages(t *testing.T) {
	runStrata(t, 3, func(s *strata.S) error {
		var got, count int
		h, err := s.RegisterHandler(func(s *strata.S, a [4]strata.Word) {
			got += int(a[0] + a[1] + a[2] + a[3])
			count++
		})
		if err != nil {
			return err
		}
		next := (s.Self() + 1) % s.PartitionSize()
		for _, send := range []func(int, strata.HandlerID, ...strata.Word) error{
			s.SendBothRLPollBoth, s.SendBothLRPollBoth, s.SendBothRLPollRight, s.SendBothLRPollRight, s.SendLeftPollBoth,
		} {
			if err := send(next, h, 1, 2, 3, 4); err != nil {
				return err
			}
		}
		polls := []func() error{s.PollLeft, s.PollRight, s.PollBoth, s.PollLeftTilEmpty, s.PollRightTilEmpty,
			s.PollLeftThenBothTilEmpty, s.PollRightThenBothTilEmpty, s.PollBothTilEmpty}
		for deadline := time.Now().Add(10 * time.Second); count < 5 && time.Now().Before(deadline); {
			for _, poll := range polls {
				if err := poll(); err != nil {
					return err
				}
			}
		}
		if count != 5 || got != 50 {
			t.Errorf("PE %d: %d messages adding to %d, want 5 adding to 50", s.Self(), count, got)
		}
		if err := s.SendLeftPollBoth(next, h, 1, 2, 3, 4, 5); err == nil || !strings.Contains(err.Error(), "at most 4") {
			t.Errorf("five arguments: %v", err)
		}
		return s.Barrier()
	})
}

// TestSeedBlockXfer runs §7's typical example: the receiver sets its
// port's base, count 0 and handler nil; the sender sends the header
// (StrataXferHeaderHandler) and the block; the handler runs once, when all
// has arrived — whichever came first.
func TestSeedBlockXfer(t *testing.T) {
	for _, size := range []int{1, 4, 7, 256, 1000} {
		runStrata(t, 2, func(s *strata.S) error {
			const port = 17
			done := 0
			h, err := s.RegisterHandler(func(s *strata.S, a [4]strata.Word) {
				if int(a[0]) != port {
					t.Errorf("port handler got port %d", a[0])
				}
				done++
			})
			if err != nil {
				return err
			}
			dest := make([]strata.Word, size+10)
			p := s.Port(port)
			p.Base, p.Origin, p.Count, p.Handler = dest, 5, 0, nil
			if err := s.Barrier(); err != nil {
				return err
			}
			if s.Self() == 0 {
				src := make([]strata.Word, size)
				for i := range src {
					src[i] = strata.Word(1000 + i)
				}
				// Block first, then header: the count goes negative, then to zero.
				if err := s.SendBlockXferPollBoth(1, port, -3, src); err != nil {
					return err
				}
				if err := s.SendBothRLPollBoth(1, strata.XferHeaderHandler, port, strata.Word(size), strata.Word(h)); err != nil {
					return err
				}
			} else {
				for done == 0 {
					if err := s.PollBothTilEmpty(); err != nil {
						return err
					}
				}
				for i, w := range dest {
					want := strata.Word(0)
					if k := i - 2; k >= 0 && k < size {
						want = strata.Word(1000 + k)
					}
					if w != want {
						t.Fatalf("size %d: word %d is %d, want %d", size, i, w, want)
					}
				}
			}
			if err := s.Barrier(); err != nil {
				return err
			}
			if done > 1 {
				t.Errorf("the port handler ran %d times", done)
			}
			return nil
		})
	}
}

// TestSeedXferPackets: §7.1's single-packet forms and the Put1-3 handlers.
func TestSeedXferPackets(t *testing.T) {
	if pao := strata.PortAndOffsetCons(4095, -5); strata.PortAndOffsetPort(pao) != 4095 || strata.PortAndOffsetOffset(pao) != -5 {
		t.Errorf("PortAndOffset round trip: port %d offset %d", strata.PortAndOffsetPort(pao), strata.PortAndOffsetOffset(pao))
	}
	if pao := strata.PortAndOffsetCons(3, strata.MaxXferOffset); strata.PortAndOffsetOffset(pao) != strata.MaxXferOffset {
		t.Errorf("largest offset: %d", strata.PortAndOffsetOffset(pao))
	}
	runStrata(t, 2, func(s *strata.S) error {
		dest := make([]strata.Word, 16)
		p := s.Port(2)
		p.Base, p.Count = dest, 14
		if err := s.Barrier(); err != nil {
			return err
		}
		if s.Self() == 0 {
			for i, send := range []func(int, strata.Word, strata.Word, strata.Word, strata.Word, strata.Word) error{
				s.SendXferBothRLPollBoth, s.SendXferBothLRPollBoth, s.SendXferBothRLPollRight,
			} {
				if err := send(1, strata.PortAndOffsetCons(2, 4*i), strata.Word(4*i+1), strata.Word(4*i+2), strata.Word(4*i+3), strata.Word(4*i+4)); err != nil {
					return err
				}
			}
			if err := s.SendBothLRPollRight(1, strata.XferPut2Handler, strata.PortAndOffsetCons(2, 12), 13, 14); err != nil {
				return err
			}
		} else {
			for p.Count != 0 {
				if err := s.PollBothTilEmpty(); err != nil {
					return err
				}
			}
			for i, w := range dest[:14] {
				if w != strata.Word(i+1) {
					t.Errorf("word %d is %d", i, w)
				}
			}
		}
		return s.Barrier()
	})
}

// TestSeedMultiBlock runs §8: set up several transfers, then
// ServiceAllTransfers(-1) sends them interleaved; the accessors describe
// them and complete runs once each.
func TestSeedMultiBlock(t *testing.T) {
	const n = 3
	runStrata(t, n, func(s *strata.S) error {
		ep, err := am.Of(s.PE())
		if err != nil {
			return err
		}
		per := ep.MaxPayload() / 4 // words per packet
		size := 2*per + 572        // more than one round of packets
		dest := make([]strata.Word, n*size)
		p := s.Port(1)
		p.Base, p.Count = dest, (n-1)*size
		if err := s.Barrier(); err != nil {
			return err
		}
		completed := map[strata.ABXid]int{}
		var ids []strata.ABXid
		for d := range n {
			if d == s.Self() {
				continue
			}
			src := make([]strata.Word, size)
			for i := range src {
				src[i] = strata.Word(s.Self()*size + i)
			}
			id, err := s.AsyncBlockXfer(d, 1, s.Self()*size, src, func(id strata.ABXid, buf []strata.Word) { completed[id]++ })
			if err != nil {
				return err
			}
			if s.GetABXproc(id) != d || s.GetABXport(id) != 1 || s.GetABXoffset(id) != s.Self()*size || len(s.GetABXbuffer(id)) != size || s.GetABXremaining(id) != size {
				t.Errorf("accessors of a new transfer: %d %d %d %d %d", s.GetABXproc(id), s.GetABXport(id), s.GetABXoffset(id), len(s.GetABXbuffer(id)), s.GetABXremaining(id))
			}
			ids = append(ids, id)
		}
		if err := s.ServiceAllTransfers(0); err != nil { // 2 packets each
			return err
		}
		if r := s.GetABXremaining(ids[0]); r != size-2*per {
			t.Errorf("after one round: %d words remain, want %d", r, size-2*per)
		}
		if err := s.CompleteTransfer(ids[0]); err != nil {
			return err
		}
		if err := s.ServiceAllTransfers(-1); err != nil {
			return err
		}
		for _, id := range ids {
			if completed[id] != 1 || s.GetABXremaining(id) != 0 {
				t.Errorf("transfer %d: completed %d times, %d words remain", id, completed[id], s.GetABXremaining(id))
			}
		}
		for p.Count != 0 {
			if err := s.PollBothTilEmpty(); err != nil {
				return err
			}
		}
		for i, w := range dest {
			if i/size != s.Self() && w != strata.Word(i) {
				t.Fatalf("PE %d: word %d is %d", s.Self(), i, w)
			}
		}
		return s.Barrier()
	})
}

func TestXferErrors(t *testing.T) {
	runStrata(t, 2, func(s *strata.S) error {
		buf := make([]strata.Word, 4)
		for _, err := range []error{
			s.SendBlockXferPollBoth(2, 0, 0, buf),
			s.SendBlockXferPollBoth(1, strata.NumPorts, 0, buf),
			s.SendBlockXferPollBoth(1, 0, strata.MaxXferOffset, buf),
		} {
			if err == nil {
				t.Error("a bad block transfer was accepted")
			}
		}
		if _, err := s.AsyncBlockXfer(1, -1, 0, buf, nil); err == nil {
			t.Error("AsyncBlockXfer to port -1 accepted")
		}
		if err := s.CompleteTransfer(7); err == nil {
			t.Error("CompleteTransfer of an unknown id accepted")
		}
		// A block outside the receiver's port: its poll says so.
		if err := s.Barrier(); err != nil {
			return err
		}
		if s.Self() == 0 {
			if err := s.SendBlockXferPollBoth(1, 9, 0, buf); err != nil {
				return err
			}
		} else {
			var err error
			for err == nil {
				err = s.PollBothTilEmpty()
			}
			if !strings.Contains(err.Error(), "outside the port") {
				t.Errorf("block into an unset port: %v", err)
			}
		}
		return s.Barrier()
	})
}

func TestNoDataNetwork(t *testing.T) {
	err := emulate.Run(1, papers.Config{}, func(p *papers.PE) error {
		p.AttachDataNet(nil)
		s, err := strata.Init(p)
		if err != nil {
			return err
		}
		if err := s.PollBoth(); !errors.Is(err, am.ErrNoNetwork) {
			t.Errorf("PollBoth without a network: %v", err)
		}
		return s.Exit(0)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDataNetInGraphAndLog: block transfers are a state of the state graph
// (StateXfer, "block transfer"), and LogDataNet logs sends and polls.
func TestDataNetInGraphAndLog(t *testing.T) {
	svg := t.TempDir() + "/xfer.svg"
	var logs [2]strings.Builder
	runStrata(t, 2, func(s *strata.S) error {
		s.SetOutput(nil, &logs[s.Self()])
		if err := s.InitTrace(svg, "block transfer"); err != nil {
			return err
		}
		s.SetLogging(strata.LogDataNet)
		p := s.Port(3)
		p.Base, p.Count = make([]strata.Word, 100), 100
		if err := s.Barrier(); err != nil {
			return err
		}
		if s.Self() == 0 {
			if err := s.SendBlockXferPollBoth(1, 3, 0, make([]strata.Word, 100)); err != nil {
				return err
			}
		} else {
			for p.Count != 0 {
				if err := s.PollBothTilEmpty(); err != nil {
					return err
				}
			}
		}
		s.SetLogging(0)
		return s.OutputStateLog()
	})
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "block transfer") {
		t.Error("the state graph has no block transfer state")
	}
	if !strings.Contains(logs[0].String(), "SendBlockXferPollBoth") || !strings.Contains(logs[1].String(), "PollBothTilEmpty: ") {
		t.Errorf("logs:\nPE 0: %s\nPE 1: %s", logs[0].String(), logs[1].String())
	}
}

// TestBlockXferZeroAllocs: a block transfer, staged beside the inbox in
// packets of up to 64 Ki words, allocates nothing once the staging rings
// are made.
func TestBlockXferZeroAllocs(t *testing.T) {
	runStrata(t, 2, func(s *strata.S) error {
		const words = 100000 // two packets
		p := s.Port(1)
		p.Base = make([]strata.Word, words)
		if err := s.Barrier(); err != nil {
			return err
		}
		if s.Self() == 1 {
			if err := s.PollBoth(); err != nil { // a PE that uses the network polls in its barriers
				return err
			}
			return s.Barrier() // polling meanwhile: the blocks arrive
		}
		buf := make([]strata.Word, words)
		var failed error
		a := testing.AllocsPerRun(100, func() {
			if err := s.SendBlockXferPollBoth(1, 1, 0, buf); err != nil && failed == nil {
				failed = err
			}
		})
		if failed != nil {
			return failed
		}
		if a != 0 {
			t.Errorf("a block transfer of %d words allocates %v times", words, a)
		}
		return s.Barrier()
	})
}
