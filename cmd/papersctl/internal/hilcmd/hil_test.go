package hilcmd

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/hil"
	"github.com/ttlpapers/ttlpapers/internal/pereport"
)

func TestHilJSON(t *testing.T) {
	gone := &pereport.Report{Stage: pereport.Run, Kind: pereport.Gone, Status: 1, PE: 2, Named: []int{1}, Cause: "PE 1 has left the data network"}
	res := &hil.Result{Wall: 3 * time.Second, Machines: []hil.Machine{
		{PE: 0, Exit: 0, Wall: 2 * time.Second, Ioctls: 100, PerOp: 34 * time.Microsecond},
		{PE: 1, Exit: -1, Err: errors.New("hil: machine 1 did not power off")},
		{PE: 2, Exit: 1, Report: gone},
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
	want := []hilMachine{{PE: 0, WallMs: 2000, PortOps: 100, PerOpUs: 34}, {PE: 1, Exit: -1, Error: "hil: machine 1 did not power off"}, {PE: 2, Exit: 1, Report: gone}}
	if got.OK || got.WallMs != 3000 || !reflect.DeepEqual(got.Machines, want) {
		t.Errorf("hil --json: %s", b)
	}
}
