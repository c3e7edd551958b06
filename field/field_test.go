package field_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/field"
)

func TestRender(t *testing.T) {
	e := field.Errorf("PE", "{PE} %d: with {PEs} %d the ids are 0 to %d", 5, 4, 3)
	if got, want := e.Error(), "PE 5: with PEs 4 the ids are 0 to 3"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	flags := map[string]string{"PE": "--pe", "PEs": "--pes"}
	if got, want := e.Render(func(f string) string { return flags[f] }), "--pe 5: with --pes 4 the ids are 0 to 3"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	if got, want := field.Errorf("X", "{Unknown} and a lone { brace").Render(func(string) string { return "" }), "Unknown and a lone { brace"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

func TestErrors(t *testing.T) {
	a, b, c := field.Errorf("A", "a"), field.Errorf("B", "b"), field.Errorf("C", "c")
	err := fmt.Errorf("pkg: %w", errors.Join(a, errors.New("plain"), errors.Join(b, c)))
	if got := field.Errors(err); !reflect.DeepEqual(got, []*field.Error{a, b, c}) {
		t.Errorf("Errors = %v, want a, b, c", got)
	}
	if !strings.Contains(err.Error(), "plain") || field.Errors(errors.New("x")) != nil {
		t.Error("a plain error has field errors, or the join lost one")
	}
}

// Braces and percent signs in the data are the data's: only the format's
// placeholders name fields.
func TestRenderLeavesDataAlone(t *testing.T) {
	flags := func(f string) string { return map[string]string{"N": "-n", "Program": "--program"}[f] }
	for _, path := range []string{"./run{N}.sh", "./run-n.sh", "./100%{Program}"} {
		e := field.Errorf("Program", "{Program} %s: not found (with {N} PEs)", path)
		if got, want := e.Error(), "Program "+path+": not found (with N PEs)"; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
		if got, want := e.Render(flags), "--program "+path+": not found (with -n PEs)"; got != want {
			t.Errorf("Render = %q, want %q", got, want)
		}
	}
	if got, want := field.Errorf("X", "{X} at 100%%").Render(func(string) string { return "--x%d" }), "--x%d at 100%"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

// TestName: the names reach the field errors of a join (a Validate's
// result), and the other errors stay as they are.
func TestName(t *testing.T) {
	err := errors.Join(field.Errorf("PEs", "{PEs} 0: need 1 to 32"), errors.New("plain {PEs}"), errors.Join(field.Errorf("N", "{N} 3")))
	field.Name(err, func(f string) string { return map[string]string{"PEs": "--pes"}[f] })
	if got, want := err.Error(), "--pes 0: need 1 to 32\nplain {PEs}\nN 3"; got != want {
		t.Errorf("named: %q, want %q", got, want)
	}
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "PEs" {
		t.Errorf("errors.As lost the field error: %v", fe)
	}
}
