package emu_test

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	helperMain()
	os.Exit(checkLeaks(m.Run()))
}
