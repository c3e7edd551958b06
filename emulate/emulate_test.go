package emulate_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// TestErrorsNamePEOnce: Run's error names each PE once — a plain error gets
// "PE k: ", a papers error, which names its PE already, is left as it is —
// and keeps every chain for errors.Is.
func TestErrorsNamePEOnce(t *testing.T) {
	err := emulate.Run(2, papers.Config{Timeout: 10 * time.Second}, func(p *papers.PE) error {
		if p.Self() == 1 {
			return errBoom
		}
		return p.Barrier() // abandoned when PE 1 fails
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Run = %v, want it to wrap PE 1's error", err)
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{"papers: PE 0: barrier abandoned: PE 1: boom", "PE 1: boom"}
	if len(lines) != 2 || lines[0] != want[0] || lines[1] != want[1] {
		t.Errorf("Run = %q, want the lines %q", lines, want)
	}
}

// TestNamePEReadsNoText: whether an error names its PE is in its chain
// (papers.Errorf, *papers.TimeoutError, …), never in its words.
func TestNamePEReadsNoText(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{papers.Errorf("am", 3, "send: %w", errBoom), "am: PE 3: send: boom"},
		{fmt.Errorf("strata: CombineInt: %w", &papers.TimeoutError{PE: 3, Op: "NAND", Waited: time.Second, Stall: "PE 1 late"}), "strata: CombineInt: papers: PE 3: NAND did not complete within 1s: PE 1 late"},
		{papers.Errorf("splitc", 2, "get: %w", errBoom), "PE 3: splitc: PE 2: get: boom"},
		{errors.New("a message that says PE 3: in words"), "PE 3: a message that says PE 3: in words"},
	} {
		if got := papers.NamePE(3, c.err).Error(); got != c.want {
			t.Errorf("NamePE(3, %q) = %q, want %q", c.err, got, c.want)
		}
	}
}

var errBoom = errors.New("boom")
