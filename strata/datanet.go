package strata

// Strata's data network (manual §6): active messages of a handler and up to
// four words, sent on either of the CM-5's two networks and received by
// polling. They run on package am, whose endpoint the runner attached to
// the PE (emulate.Run, papersctl run); docs/strata.md maps the names.

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/papers"
)

// HandlerID names a handler on every PE (RegisterHandler, or one of
// Strata's own: XferHeaderHandler, XferPut1Handler …).
type HandlerID = am.HandlerID

// Handler is a Strata handler: it gets the message's four argument words
// (unused ones are zero). It runs when this PE polls, atomically: it may
// send one reply to the sender (a Send… naming the sender, which a handler
// does without polling) and must not poll or wait.
type Handler func(s *S, arg [4]Word)

// net returns the data-network endpoint, or an error saying how to get one.
func (s *S) net(op string) (*am.Endpoint, error) {
	if s.ep == nil {
		return nil, papers.Errorf("strata", s.self, "%s: %w", op, am.ErrNoNetwork)
	}
	s.netUsed = true
	return s.ep, nil
}

// attachNet installs Strata's handlers on the PE's data network, if it has
// one (Init): every PE installs them before any can send to another.
func (s *S) attachNet() {
	ep, err := am.Of(s.pe)
	if err != nil {
		return
	}
	s.ep = ep
	ep.Install(XferHeaderHandler, s.onXferHeader)
	ep.Install(XferPut1Handler, s.onXferPut(1))
	ep.Install(XferPut2Handler, s.onXferPut(2))
	ep.Install(XferPut3Handler, s.onXferPut(3))
	ep.Install(hXfer4, s.onXfer4)
	ep.Install(hXferBlock, s.onXferBlock)
}

// RegisterHandler adds fn to this PE's handler table and returns its
// number; every PE registers the same handlers in the same order (the
// CM-5's nodes ran one code image, so a handler's address was the same
// everywhere).
func (s *S) RegisterHandler(fn Handler) (HandlerID, error) {
	ep, err := s.net("RegisterHandler")
	if err != nil {
		return 0, err
	}
	h := ep.Register(func(m *am.Msg) {
		fn(s, [4]Word{Word(m.Args[0]), Word(m.Args[1]), Word(m.Args[2]), Word(m.Args[3])})
	})
	for len(s.handlers) <= int(h) {
		s.handlers = append(s.handlers, nil)
	}
	s.handlers[h] = fn // for the ports' handlers that StrataXferHeaderHandler names
	return h, nil
}

// sendAM is every Send…: on first (or either network, when both), polling
// the networks in poll.
func (s *S) sendAM(op string, proc int, first am.Net, both bool, poll am.Nets, h HandlerID, args []Word) error {
	ep, err := s.net(op)
	if err != nil {
		return err
	}
	if len(args) > 4 {
		return papers.Errorf("strata", s.self, "%s: %d arguments: an active message carries at most 4 words", op, len(args))
	}
	var a am.Args
	for i, w := range args {
		a[i] = uint64(w)
	}
	if s.logging&LogDataNet != 0 {
		s.StrataLog("%s to PE %d: handler %d %v", op, proc, h, args)
	}
	if err := ep.Send(proc, first, both, poll, h, a, nil); err != nil {
		return fmt.Errorf("strata: %s: %w", op, err)
	}
	return nil
}

// SendBothRLPollBoth sends an active message to proc on either network,
// polling both: it tries the right network and polls it, then the left and
// polls it, until the message is out (Strata's SendBothRLPollBoth; CMMD's
// CMAML_rpc). Alternating it with SendBothLRPollBoth in a tight loop is
// faster, as the manual says.
func (s *S) SendBothRLPollBoth(proc int, h HandlerID, args ...Word) error {
	return s.sendAM("SendBothRLPollBoth", proc, am.Right, true, am.PollBoth, h, args)
}

// SendBothLRPollBoth is SendBothRLPollBoth starting on the left network.
func (s *S) SendBothLRPollBoth(proc int, h HandlerID, args ...Word) error {
	return s.sendAM("SendBothLRPollBoth", proc, am.Left, true, am.PollBoth, h, args)
}

// SendBothRLPollRight sends on either network, starting on the right, but
// polls only the right one (Strata's SendBothRLPollRight; about CMMD's
// CMAML_reply).
func (s *S) SendBothRLPollRight(proc int, h HandlerID, args ...Word) error {
	return s.sendAM("SendBothRLPollRight", proc, am.Right, true, am.PollRight, h, args)
}

// SendBothLRPollRight sends on either network, starting on the left, and
// polls only the right one.
func (s *S) SendBothLRPollRight(proc int, h HandlerID, args ...Word) error {
	return s.sendAM("SendBothLRPollRight", proc, am.Left, true, am.PollRight, h, args)
}

// SendLeftPollBoth sends on the left network, polling both (Strata's
// SendLeftPollBoth; CMMD's CMAML_request).
func (s *S) SendLeftPollBoth(proc int, h HandlerID, args ...Word) error {
	return s.sendAM("SendLeftPollBoth", proc, am.Left, false, am.PollBoth, h, args)
}

// poll runs the handlers of what has arrived on nets.
func (s *S) poll(op string, nets am.Nets, tilEmpty bool) error {
	ep, err := s.net(op)
	if err != nil {
		return err
	}
	n, err := ep.Poll(nets, tilEmpty)
	if s.logging&LogDataNet != 0 && n > 0 {
		s.StrataLog("%s: %d messages", op, n)
	}
	if err != nil {
		return fmt.Errorf("strata: %s: %w", op, err)
	}
	return nil
}

// PollLeft handles at most one message from the left network (Strata's
// PollLeft).
func (s *S) PollLeft() error { return s.poll("PollLeft", am.PollLeft, false) }

// PollRight handles at most one message from the right network.
func (s *S) PollRight() error { return s.poll("PollRight", am.PollRight, false) }

// PollBoth handles at most one message from each network: PollLeft, then
// PollRight.
func (s *S) PollBoth() error { return s.poll("PollBoth", am.PollBoth, false) }

// PollLeftTilEmpty handles messages from the left network until none is
// pending.
func (s *S) PollLeftTilEmpty() error { return s.poll("PollLeftTilEmpty", am.PollLeft, true) }

// PollRightTilEmpty handles messages from the right network until none is
// pending.
func (s *S) PollRightTilEmpty() error { return s.poll("PollRightTilEmpty", am.PollRight, true) }

// PollBothTilEmpty handles messages from both networks until neither has
// one pending: the manual's recommended poll.
func (s *S) PollBothTilEmpty() error { return s.poll("PollBothTilEmpty", am.PollBoth, true) }

// PollLeftThenBothTilEmpty polls the left network; if it finds a message,
// it polls both until they are empty. Alternating it with
// PollRightThenBothTilEmpty in a loop is the manual's fast way to poll.
func (s *S) PollLeftThenBothTilEmpty() error {
	return s.pollThenBoth("PollLeftThenBothTilEmpty", am.PollLeft)
}

// PollRightThenBothTilEmpty is PollLeftThenBothTilEmpty starting on the
// right network.
func (s *S) PollRightThenBothTilEmpty() error {
	return s.pollThenBoth("PollRightThenBothTilEmpty", am.PollRight)
}

func (s *S) pollThenBoth(op string, first am.Nets) error {
	ep, err := s.net(op)
	if err != nil {
		return err
	}
	n, err := ep.Poll(first, false)
	if err == nil && n > 0 {
		_, err = ep.Poll(am.PollBoth, true)
	}
	if err != nil {
		return fmt.Errorf("strata: %s: %w", op, err)
	}
	return nil
}

// barrier is the board barrier; once the program uses the data network it
// polls while it waits (Strata's Barrier is not ATOMIC: it polls), so a PE
// in a barrier still answers the others' messages.
func (s *S) barrier() error {
	if s.netUsed {
		return am.Barrier(s.pe)
	}
	return s.pe.Barrier()
}
