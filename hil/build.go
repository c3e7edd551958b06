package hil

import (
	"context"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/qemu"
)

// PapersctlPackage is the import path of the command the machines run.
const PapersctlPackage = "github.com/ttlpapers/ttlpapers/cmd/papersctl"

// BuildPapersctl builds a static linux/amd64 papersctl (CGO_ENABLED=0, as
// init and the ioperm backend need) at out, from the module containing dir.
// With empty caches on a busy PC that takes minutes: progress, unless nil,
// hears how long it has taken every ProgressEvery.
func BuildPapersctl(ctx context.Context, dir, out string, progress func(building time.Duration)) error {
	if progress != nil {
		start, done := time.Now(), make(chan struct{})
		var ticker sync.WaitGroup
		ticker.Go(func() { tickUntil(done, func() { progress(time.Since(start)) }) })
		defer ticker.Wait()
		defer close(done)
	}
	return qemu.BuildStatic(ctx, dir, PapersctlPackage, out)
}

// StaticSelf returns the path of the running executable when it can serve
// as the machines' papersctl as it is: built for linux/amd64 with
// CGO_ENABLED=0. Otherwise it returns "".
func StaticSelf() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	bi, err := buildinfo.ReadFile(exe)
	if err != nil || bi.Path != PapersctlPackage {
		return ""
	}
	want := map[string]string{"CGO_ENABLED": "0", "GOOS": "linux", "GOARCH": "amd64"}
	for _, s := range bi.Settings {
		if v, ok := want[s.Key]; ok && v == s.Value {
			delete(want, s.Key)
		}
	}
	if len(want) != 0 {
		return ""
	}
	return exe
}

// CheckProgram reports whether path can run in the machines as it is: a
// static linux/amd64 executable (no dynamic loader), as CGO_ENABLED=0 go
// build makes one; the machines have no libraries.
func CheckProgram(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("hil: program %s: %w (want a static linux/amd64 executable)", path, err)
	}
	defer f.Close()
	static := true
	for _, p := range f.Progs {
		static = static && p.Type != elf.PT_INTERP
	}
	switch {
	case f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64:
		return fmt.Errorf("hil: program %s is for %v, not amd64: build it with GOOS=linux GOARCH=amd64 CGO_ENABLED=0 go build", path, f.Machine)
	case f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN:
		return fmt.Errorf("hil: program %s is not an executable (%v)", path, f.Type)
	case !static:
		return fmt.Errorf("hil: program %s is linked dynamically and the machines have no libraries: build it with CGO_ENABLED=0 go build", path)
	}
	return nil
}
