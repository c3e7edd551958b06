package hil

import (
	"context"
	"debug/buildinfo"
	"os"

	"github.com/ttlpapers/ttlpapers/internal/qemu"
)

// PapersctlPackage is the import path of the command the machines run.
const PapersctlPackage = "github.com/ttlpapers/ttlpapers/cmd/papersctl"

// BuildPapersctl builds a static linux/amd64 papersctl (CGO_ENABLED=0, as
// init and the ioperm backend need) at out, from the module containing dir.
func BuildPapersctl(ctx context.Context, dir, out string) error {
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
