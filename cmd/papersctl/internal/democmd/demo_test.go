package democmd

import (
	"encoding/json"
	"testing"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base/basetest"
)

func TestDemoJSON(t *testing.T) {
	base.Commands = []*base.Command{Cmd}
	stdout, stderr, status := basetest.Run("demo", "--pes", "3", "--bench", "10", "--json")
	var rs []demoResult
	if status != 0 || json.Unmarshal([]byte(stdout), &rs) != nil {
		t.Fatalf("exit %d, stderr %q, stdout %q", status, stderr, stdout)
	}
	if len(rs) != 3 {
		t.Fatalf("%d results, want one per PE", len(rs))
	}
	for k, r := range rs {
		if r.PE != k || r.PEs != 3 || r.Sum != uint64(demoValue(0))+uint64(demoValue(1))+uint64(demoValue(2)) || r.Barriers != 10 || r.BarrierNs <= 0 {
			t.Errorf("PE %d: %+v", k, r)
		}
	}
}
