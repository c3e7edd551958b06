package kicad_test

import (
	"fmt"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/hw/kicad"
)

type libPin struct {
	num, name, typ, shape string
	unit                  int
}

// loadLibrary reads one KiCad symbol library: pins of each symbol's body
// style 1 (style 2 is the De Morgan drawing), with "extends" resolved.
func loadLibrary(t *testing.T, lib string) map[string][]libPin {
	t.Helper()
	root, err := kicad.ParseExpr(string(installedLibrary(t, lib)))
	if err != nil {
		t.Fatal(err)
	}
	syms := map[string][]libPin{}
	extends := map[string]string{}
	for _, s := range root.Children("symbol") {
		name := s.Arg(0)
		if e := s.Child("extends"); e != nil {
			extends[name] = e.Arg(0)
		}
		for _, u := range s.Children("symbol") {
			parts := strings.Split(u.Arg(0), "_")
			unit, _ := strconv.Atoi(parts[len(parts)-2])
			if parts[len(parts)-1] == "2" {
				continue
			}
			for _, p := range u.Children("pin") {
				syms[name] = append(syms[name], libPin{p.Child("number").Arg(0), p.Child("name").Arg(0), p.Arg(0), p.Arg(1), unit})
			}
		}
	}
	for name, base := range extends {
		syms[name] = syms[base]
	}
	return syms
}

// TestPinoutsMatchKiCadLibrary checks every 74LS part of hw against KiCad's
// own 74xx library: the same pin numbers with the same electrical types and
// supply names, each gate's pins in one KiCad unit, NAND outputs inverted,
// enable polarities and flip-flop pin roles as KiCad draws them.
func TestPinoutsMatchKiCadLibrary(t *testing.T) {
	lib := loadLibrary(t, "74xx")
	for _, p := range hw.Parts {
		t.Run(p.Name, func(t *testing.T) {
			kpins := lib[strings.TrimPrefix(p.Symbol, "74xx:")]
			if len(kpins) == 0 {
				t.Fatalf("KiCad's 74xx library has no %s", p.Symbol)
			}
			byNum := map[int]libPin{}
			for _, kp := range kpins {
				n, err := strconv.Atoi(kp.num)
				if err != nil {
					t.Fatalf("KiCad pin number %q", kp.num)
				}
				byNum[n] = kp
			}
			for _, pin := range p.Pins {
				kp, ok := byNum[pin.Num]
				want := map[hw.PinType]string{hw.PinInput: "input", hw.PinOutput: "output", hw.PinTriState: "tri_state", hw.PinPower: "power_in", hw.PinGround: "power_in"}[pin.Type]
				switch {
				case pin.Type == hw.PinNC:
					if ok && kp.typ != "no_connect" {
						t.Errorf("pin %d: not connected in hw, %s in KiCad", pin.Num, kp.typ)
					}
				case !ok:
					t.Errorf("pin %d (%s) missing from KiCad's symbol", pin.Num, pin.Name)
				case kp.typ != want:
					t.Errorf("pin %d (%s): %s in hw, %s in KiCad", pin.Num, pin.Name, want, kp.typ)
				case (pin.Type == hw.PinPower || pin.Type == hw.PinGround) && kp.name != pin.Name:
					t.Errorf("supply pin %d: %s in hw, %s in KiCad", pin.Num, pin.Name, kp.name)
				}
			}
			if len(byNum) > len(p.Pins) {
				t.Errorf("KiCad's symbol has %d pins, hw %d", len(byNum), len(p.Pins))
			}
			for i, u := range p.Units {
				checkUnit(t, i, p, u, byNum)
			}
		})
	}
}

func checkUnit(t *testing.T, i int, p *hw.Part, u hw.Unit, byNum map[int]libPin) {
	pins := append(append([]int(nil), u.In...), u.Out)
	if u.Enable != 0 {
		pins = append(pins, u.Enable)
	}
	if u.Func == hw.FuncDFF {
		pins = append(pins, u.NQ, u.Preset, u.Clear)
		roles := map[int]string{u.In[0]: "D", u.In[1]: "C", u.Out: "Q", u.NQ: "~{Q}", u.Preset: "~{S}", u.Clear: "~{R}"}
		for n, want := range roles {
			if byNum[n].name != want {
				t.Errorf("unit %d: pin %d is %s in KiCad, hw uses it as %s", i, n, byNum[n].name, want)
			}
		}
	}
	// All of a gate's pins sit in one KiCad unit (the 74LS244, drawn as a
	// single unit, pairs its buffers by name: I0a drives O0a, enabled by OEa).
	if p == hw.LS244 {
		in, out, en := byNum[u.In[0]].name, byNum[u.Out].name, byNum[u.Enable].name
		if in[0] != 'I' || out != "O"+in[1:] || en != "OE"+in[2:] {
			t.Errorf("unit %d: KiCad pairs input %s, output %s, enable %s", i, in, out, en)
		}
	} else {
		unit := byNum[pins[0]].unit
		for _, n := range pins {
			if byNum[n].unit != unit {
				t.Errorf("unit %d: pins %v are in several KiCad units", i, pins)
				break
			}
		}
	}
	switch u.Func {
	case hw.FuncNAND:
		if byNum[u.Out].shape != "inverted" {
			t.Errorf("unit %d: NAND output pin %d not inverted in KiCad", i, u.Out)
		}
	case hw.FuncOR:
		if byNum[u.Out].shape != "line" {
			t.Errorf("unit %d: OR output pin %d drawn %s in KiCad", i, u.Out, byNum[u.Out].shape)
		}
	case hw.FuncBuffer:
		if got := byNum[u.Enable].shape == "inverted"; got != u.EnableLow {
			t.Errorf("unit %d: enable pin %d active-low=%v in hw, KiCad shape %s", i, u.Enable, u.EnableLow, byNum[u.Enable].shape)
		}
	}
}

// TestPassivesMatchKiCadLibrary checks the connectors, LEDs, resistors and
// capacitors: the same pin numbers as KiCad's symbols, and the same names
// where KiCad names them (LED anodes and cathodes).
func TestPassivesMatchKiCadLibrary(t *testing.T) {
	libs := map[string]map[string][]libPin{}
	for _, p := range hw.Passives {
		lib, name, _ := strings.Cut(p.Symbol, ":")
		if libs[lib] == nil {
			libs[lib] = loadLibrary(t, lib)
		}
		kpins := libs[lib][name]
		if len(kpins) == 0 {
			t.Errorf("%s: no symbol %s in KiCad's library", p.Name, p.Symbol)
			continue
		}
		kname := map[string]string{}
		for _, kp := range kpins {
			kname[kp.num] = kp.name
		}
		if len(kname) != len(p.Pins) {
			t.Errorf("%s (%s): %d pins in hw, %d in KiCad", p.Name, p.Symbol, len(p.Pins), len(kname))
		}
		for _, pin := range p.Pins {
			n := strconv.Itoa(pin.Num)
			kn, ok := kname[n]
			// KiCad names LED leads (A, K, A1, A2); connector and
			// resistor pins carry only numbers ("~", "Pin_1", "P14").
			meaningful := kn != "~" && !strings.HasPrefix(kn, "Pin_") && kn != "P"+n && kn != n
			if !ok {
				t.Errorf("%s (%s): pin %s missing from KiCad's symbol", p.Name, p.Symbol, n)
			} else if meaningful && kn != pin.Name {
				t.Errorf("%s (%s): pin %s is %s in hw, %s in KiCad", p.Name, p.Symbol, n, pin.Name, kn)
			}
		}
	}
}

// TestFootprintsExist checks every footprint name against Debian's
// kicad-footprints package when it is installed, and that the 3-D model
// the boards link is the library footprint's, placed as it places it.
func TestFootprintsExist(t *testing.T) {
	const dir = "/usr/share/kicad/footprints"
	if _, err := os.Stat(dir); err != nil {
		testenv.Missing(t, "%s not found: install Debian's kicad-footprints package to check footprint names", dir)
	}
	for _, p := range append(append([]*hw.Part(nil), hw.Parts...), hw.Passives...) {
		lib, name, _ := strings.Cut(p.Footprint, ":")
		src, err := os.ReadFile(filepath.Join(dir, lib+".pretty", name+".kicad_mod"))
		if err != nil {
			t.Errorf("%s: footprint %s is not in KiCad's library", p.Name, p.Footprint)
			continue
		}
		fp, err := kicad.ParseExpr(string(src))
		if err != nil {
			t.Fatal(err)
		}
		m := fp.Child("model")
		place := fmt.Sprintf("offset %s, scale %s, rotation %s", xyz(m.Child("offset")), xyz(m.Child("scale")), xyz(m.Child("rotate")))
		if m.Arg(0) != kicad.Model3D(p.Footprint) || place != "offset 0 0 0, scale 1 1 1, rotation 0 0 0" {
			t.Errorf("%s: KiCad's footprint links model %q at %s, the boards %q at no offset, scale 1, no rotation", p.Footprint, m.Arg(0), place, kicad.Model3D(p.Footprint))
		}
	}
}

// xyz is the numbers of a model's (offset (xyz ...)) or the like.
func xyz(e *kicad.Expr) string {
	v := e.Child("xyz")
	return strings.Join([]string{v.Arg(0), v.Arg(1), v.Arg(2)}, " ")
}
