// Package versioncmd is papersctl version.
package versioncmd

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
)

// Cmd is papersctl version.
var Cmd = &base.Command{Name: "version", Summary: "print papersctl's version, source revision and Go version",
	Synopsis: "[--json]", Guest: true,
	About: "Prints the module version and, when built from a git checkout, the revision, its time and\n" +
		"whether the tree had uncommitted changes (from the build info Go records). Same as --version.",
	New: func() base.Runner { return &versionCmd{} }}

type versionCmd struct{ json bool }

func (c *versionCmd) Define(f *base.FlagSet) { f.Bool(&c.json, "json", "print the version as JSON") }

func (c *versionCmd) Check(*base.FlagSet, []string) error { return nil }

func (c *versionCmd) Run(e *base.Env, _ []string) error {
	bi, _ := debug.ReadBuildInfo()
	v := buildVersion(bi)
	if c.json {
		return base.WriteJSON(e.Stdout, v)
	}
	_, err := fmt.Fprintln(e.Stdout, v)
	return err
}

// version is what papersctl version reports.
type version struct {
	Module   string `json:"module"`
	Version  string `json:"version"`            // "v1.2.0", or "(devel)" for a build from a checkout
	Revision string `json:"revision,omitempty"` // VCS revision
	Time     string `json:"time,omitempty"`     // revision's commit time
	Modified bool   `json:"modified,omitempty"` // built from a tree with uncommitted changes
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func buildVersion(bi *debug.BuildInfo) version {
	v := version{Module: "github.com/ttlpapers/ttlpapers", Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return v
	}
	if bi.Main.Path != "" {
		v.Module, v.Version = bi.Main.Path, bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func (v version) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "papersctl %s (%s)", v.Version, v.Module)
	if v.Revision != "" {
		fmt.Fprintf(&b, " revision %s", v.Revision)
		if v.Time != "" {
			fmt.Fprintf(&b, " of %s", v.Time)
		}
		if v.Modified {
			b.WriteString(", with uncommitted changes")
		}
	}
	fmt.Fprintf(&b, ", %s %s", v.Go, v.Platform)
	return b.String()
}
