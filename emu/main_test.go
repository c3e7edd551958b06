package emu_test

import (
	"os"
	"testing"

	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
)

func TestMain(m *testing.M) {
	helperMain()
	os.Exit(leakcheck.Run(m))
}
