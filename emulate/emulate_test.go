package emulate_test

import (
	"errors"
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
	boom := errors.New("boom")
	err := emulate.Run(2, papers.Config{Timeout: 10 * time.Second}, func(p *papers.PE) error {
		if p.Self() == 1 {
			return boom
		}
		return p.Barrier() // abandoned when PE 1 fails
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want it to wrap PE 1's error", err)
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{"papers: PE 0: barrier abandoned: PE 1: boom", "PE 1: boom"}
	if len(lines) != 2 || lines[0] != want[0] || lines[1] != want[1] {
		t.Errorf("Run = %q, want the lines %q", lines, want)
	}
}
