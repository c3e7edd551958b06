package tests

import (
	"github.com/ttlpapers/ttlpapers/am"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/am/tcpnet"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/timed"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/strata"
)

// enumStrings holds, for every enum type of the module with a String
// method, that method on a value past the last constant. TestEnumTable
// keeps the table complete.
var enumStrings = map[string]func() string{
	"hw.Func":            func() string { return hw.Func(9).String() },
	"hw.PinType":         func() string { return hw.PinType(99).String() },
	"lpt.Register":       func() string { return lpt.Register(9).String() },
	"papers.Op":          func() string { return papers.Op(99).String() },
	"papers.AbsenceKind": func() string { return papers.AbsenceKind(99).String() },
	"strata.CombineOp":   func() string { return strata.CombineOp(99).String() },
	"strata.CompositeOp": func() string { return strata.CompositeOp(99).String() },
	"strata.Segment":     func() string { return strata.Segment(9).String() },
	"emu.FaultKind":      func() string { return emu.FaultKind(9).String() },
	"lpt.LED":            func() string { return lpt.LED(7).String() },
	"timed.Corner":       func() string { return timed.Corner(99).String() },
	"queue.Net":          func() string { return am.Net(9).String() }, // am.Net
	"tcpnet.Mode":        func() string { return tcpnet.Mode(9).String() },
}

// TestEnumStringsDoNotPanic: an out-of-range value prints as its type and
// number, "Func(9)", as the standard library's enums do.
func TestEnumStringsDoNotPanic(t *testing.T) {
	for name, str := range enumStrings {
		got, panicked := call(str)
		switch {
		case panicked != nil:
			t.Errorf("%s: String panics on an out-of-range value: %v", name, panicked)
		default:
			typ := name[strings.IndexByte(name, '.')+1:]
			if !strings.HasPrefix(got, typ+"(") {
				t.Errorf("%s: out-of-range value prints %q, want %s(<n>)", name, got, typ)
			}
		}
	}
}

func call(f func() string) (s string, panicked any) {
	defer func() { panicked = recover() }()
	return f(), nil
}

// TestEnumTable finds every exported integer type of the module that has
// constants and a String method, and checks that enumStrings covers it.
func TestEnumTable(t *testing.T) {
	found := enumTypes(t)
	for _, name := range found {
		if enumStrings[name] == nil {
			t.Errorf("enum %s has a String method: add it to enumStrings in tests/enums_test.go", name)
		}
	}
	for name := range enumStrings {
		if !slices.Contains(found, name) {
			t.Errorf("enumStrings lists %s, which is not an enum type with a String method of the module", name)
		}
	}
}

// enumTypes returns "pkg.Type" for each exported integer type declared in the
// module's non-test, non-main sources that has a String method and typed
// constants.
func enumTypes(t *testing.T) []string {
	t.Helper()
	type info struct{ integer, stringer, consts bool }
	types := map[string]*info{}
	get := func(name string) *info {
		if types[name] == nil {
			types[name] = &info{}
		}
		return types[name]
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil || f.Name.Name == "main" {
			return err
		}
		pkg := f.Name.Name
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && d.Name.Name == "String" && len(d.Recv.List) == 1 {
					if id, ok := d.Recv.List[0].Type.(*ast.Ident); ok {
						get(pkg + "." + id.Name).stringer = true
					}
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if id, ok := s.Type.(*ast.Ident); ok && isInteger(id.Name) {
							get(pkg + "." + s.Name.Name).integer = true
						}
					case *ast.ValueSpec:
						if id, ok := s.Type.(*ast.Ident); ok && d.Tok == token.CONST {
							get(pkg + "." + id.Name).consts = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name, in := range types {
		if in.integer && in.stringer && in.consts && ast.IsExported(name[strings.IndexByte(name, '.')+1:]) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func isInteger(name string) bool {
	switch name {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "byte":
		return true
	}
	return false
}
