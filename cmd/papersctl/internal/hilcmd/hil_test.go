package hilcmd

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/hil"
)

func TestHilJSON(t *testing.T) {
	res := &hil.Result{Wall: 3 * time.Second, Machines: []hil.Machine{
		{PE: 0, Exit: 0, Wall: 2 * time.Second, Ioctls: 100, PerOp: 34 * time.Microsecond},
		{PE: 1, Exit: -1, Err: errors.New("hil: machine 1 did not power off")},
	}}
	b, err := json.Marshal(hilJSON(res))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		OK       bool         `json:"ok"`
		WallMs   float64      `json:"wall_ms"`
		Machines []hilMachine `json:"machines"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := []hilMachine{{PE: 0, WallMs: 2000, PortOps: 100, PerOpUs: 34}, {PE: 1, Exit: -1, Error: "hil: machine 1 did not power off"}}
	if got.OK || got.WallMs != 3000 || !slices.Equal(got.Machines, want) {
		t.Errorf("hil --json: %s", b)
	}
}
