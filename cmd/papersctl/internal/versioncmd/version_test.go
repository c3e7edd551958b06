package versioncmd

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/ttlpapers/ttlpapers", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.time", Value: "2026-11-22T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	v := buildVersion(bi)
	if v.Version != "v1.2.3" || v.Revision != "0123abc" || v.Time != "2026-11-22T10:00:00Z" || !v.Modified {
		t.Errorf("buildVersion = %+v", v)
	}
	s := v.String()
	for _, want := range []string{"papersctl v1.2.3", "revision 0123abc of 2026-11-22T10:00:00Z", "uncommitted changes", v.Go} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	if s := buildVersion(nil).String(); !strings.Contains(s, "(unknown)") {
		t.Errorf("no build info: %q", s)
	}
}
