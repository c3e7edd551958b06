package measure_test

import (
	"os"
	"testing"

	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
)

// TestMain fails the tests when they leave goroutines running.
func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }
