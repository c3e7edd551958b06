package selftest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// ErrNoAnswer is what an AskLED function returns when nobody answers: the
// input ended (a console with nobody at it, a closed pipe) or no answer
// came in time. The selftest then checks everything but the LED lines,
// reports them not checkable and says why in a note; it does not fail.
var ErrNoAnswer = errors.New("nobody answered")

// DefaultPromptWait is how long Prompt waits for each answer.
const DefaultPromptWait = 2 * time.Minute

// Prompt returns an AskLED function for a person at a console: it writes
// each question to out and reads the answer, a line, from in. It returns
// ErrNoAnswer, and from then on returns it at once, when in ends or no
// answer comes within wait (zero: DefaultPromptWait). A line that is not a
// colour repeats the question.
func Prompt(in io.Reader, out io.Writer, wait time.Duration) func(pe int, question string) (lpt.LED, error) {
	if wait <= 0 {
		wait = DefaultPromptWait
	}
	p := &prompt{in: in, out: out, wait: wait}
	return p.ask
}

type prompt struct {
	in    io.Reader
	out   io.Writer
	wait  time.Duration
	once  sync.Once
	lines chan string   // answers; closed when in ends
	quit  chan struct{} // closed when the prompt gives up
	gone  error         // why nobody answers any more, once known
}

// read starts the reader of in. It is a goroutine so that a wait can time
// out; it ends when in does (a console read cannot be interrupted).
func (p *prompt) read() {
	p.lines, p.quit = make(chan string), make(chan struct{})
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(p.in)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			case <-p.quit:
				return
			}
		}
	}()
}

func (p *prompt) ask(pe int, question string) (lpt.LED, error) {
	if p.gone != nil {
		return 0, p.gone
	}
	p.once.Do(p.read)
	timer := time.NewTimer(p.wait)
	defer timer.Stop()
	for {
		fmt.Fprintf(p.out, "%s [g]reen, [r]ed, [o]range (both), [d]ark: ", question)
		select {
		case line, ok := <-p.lines:
			if !ok {
				return 0, p.giveUp(fmt.Errorf("asking about PE %d's LED: %w (the input ended)", pe, ErrNoAnswer))
			}
			if c, ok := parseColour(line); ok {
				return c, nil
			}
		case <-timer.C:
			return 0, p.giveUp(fmt.Errorf("asking about PE %d's LED: %w within %v", pe, ErrNoAnswer, p.wait))
		}
	}
}

// giveUp ends the question's line and makes err every later answer.
func (p *prompt) giveUp(err error) error {
	fmt.Fprintln(p.out)
	p.gone = err
	close(p.quit)
	return err
}

// parseColour reads an answer to the LED question.
func parseColour(s string) (lpt.LED, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "g", "green":
		return lpt.Green, true
	case "r", "red":
		return lpt.Red, true
	case "o", "orange", "both":
		return lpt.Orange, true
	case "d", "dark", "off", "none":
		return lpt.Dark, true
	}
	return 0, false
}
