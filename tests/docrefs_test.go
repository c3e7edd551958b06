package tests

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The docs must not drift from the code: every Go name they give — in the
// markdown docs' code (`papers.Open`, `emu.Board.Inject`, fenced blocks)
// and in the packages' doc comments (qualified names such as
// lpt.LineByName, doc links such as [Board.Port] or [papers.Config]) —
// must be an exported symbol of the module, or of a package the comment's
// file imports.

// TestDocReferences checks every such reference in the module.
func TestDocReferences(t *testing.T) {
	syms := loadSymbols(t)
	var bad []string
	files, err := exec.Command("git", "-C", syms.root, "ls-files", "*.md").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, md := range strings.Fields(string(files)) {
		src, err := os.ReadFile(filepath.Join(syms.root, md))
		if err != nil {
			t.Fatal(err)
		}
		bad = append(bad, syms.checkMarkdown(md, string(src))...)
	}
	for _, dir := range syms.dirs {
		bad = append(bad, syms.checkComments(t, dir)...)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestDocReferencesCatchDrift plants references to symbols that do not
// exist, or no longer do, and checks that each is reported.
func TestDocReferencesCatchDrift(t *testing.T) {
	syms := loadSymbols(t)
	md := "Run it with `papers.Emulate(4, cfg, fn)`, then `emu.Board.Inject` and `emu.Board.Explode`.\n" +
		"```go\nb, _ := hw.New(4)\nc := emu.Cluster{}\n```\n"
	got := syms.checkMarkdown("planted.md", md)
	for _, want := range []string{"planted.md:1: papers.Emulate", "planted.md:1: emu.Board.Explode", "planted.md:4: emu.Cluster"} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("planted %s not reported; got %q", want, got)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d reports for 3 bad references: %q", len(got), got)
	}

	dir := t.TempDir()
	src := `// Package planted names [Cluster], [hw.Board.Trace], [hw.Board.Gone], lpt.LineByName and lpt.NoSuchLine.
package planted

import "github.com/ttlpapers/ttlpapers/hw"

// Board is a board; see [Board.Size] and [context.Context], and
//
//	x := m[Index] // code: not a link
type Board struct{ b *hw.Board }
`
	if err := os.WriteFile(filepath.Join(dir, "planted.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	syms.pkgs[dir] = types.NewPackage("example.com/planted", "planted")
	got = syms.checkComments(t, dir)
	for _, want := range []string{"[Cluster]", "[hw.Board.Gone]", "lpt.NoSuchLine", "[Board.Size]"} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("planted %s not reported; got %q", want, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("%d reports for 4 bad references: %q", len(got), got)
	}
}

// symbols is the module's type-checked packages.
type symbols struct {
	byName map[string]*types.Package // module packages by name (main packages left out)
	byPath map[string]*types.Package // every package the module depends on
	pkgs   map[string]*types.Package // module packages by directory
	dirs   []string
	root   string // the module's directory
	fset   *token.FileSet
}

// loadSymbols imports the module's packages from the export data go list
// builds (the standard library's go/importer reads it), so every method,
// field and embedded type resolves as the compiler sees it.
func loadSymbols(t *testing.T) *symbols {
	t.Helper()
	type pkgInfo struct{ path, export, name, dir string }
	var all []pkgInfo
	exports := map[string]string{}
	for _, line := range goList(t, "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Name}}\t{{.Dir}}", "../...") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("go list: %q", line)
		}
		all = append(all, pkgInfo{f[0], f[1], f[2], f[3]})
		exports[f[0]] = f[1]
	}
	s := &symbols{byName: map[string]*types.Package{}, byPath: map[string]*types.Package{}, pkgs: map[string]*types.Package{}, fset: token.NewFileSet()}
	s.root = goList(t, "-m", "-f", "{{.Dir}}")[0]
	imp := importer.ForCompiler(s.fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	for _, p := range all {
		if p.path == "unsafe" || p.export == "" {
			continue
		}
		pkg, err := imp.Import(p.path)
		if err != nil {
			t.Fatalf("importing %s: %v", p.path, err)
		}
		s.byPath[p.path] = pkg
		if !strings.HasPrefix(p.path, module) || p.name == "main" {
			continue
		}
		if other := s.byName[p.name]; other != nil {
			t.Fatalf("packages %s and %s share the name %s: docs naming %[3]s.X would be ambiguous", other.Path(), p.path, p.name)
		}
		s.byName[p.name] = pkg
		s.pkgs[p.dir] = pkg
		s.dirs = append(s.dirs, p.dir)
	}
	return s
}

// resolves reports whether name (Name, or Type.Member) is an exported
// symbol of pkg. A method may go by its package alone, as prose does
// (papers.Barrier for papers.PE.Barrier), when one of the package's types
// has it.
func resolves(pkg *types.Package, name string) bool {
	first, member, _ := strings.Cut(name, ".")
	obj := pkg.Scope().Lookup(first)
	if obj == nil && member == "" {
		return isMethod(pkg, first)
	}
	if obj == nil || !obj.Exported() {
		return false
	}
	if member == "" {
		return true
	}
	var typ types.Type
	switch o := obj.(type) {
	case *types.TypeName:
		typ = types.NewPointer(o.Type()) // pointer methods too
	case *types.Var, *types.Const:
		typ = o.Type()
	default:
		return false
	}
	m, _, _ := types.LookupFieldOrMethod(typ, true, pkg, member)
	return m != nil && m.Exported()
}

// isMethod reports whether an exported type of pkg has the exported
// method name.
func isMethod(pkg *types.Package, name string) bool {
	if !token.IsExported(name) {
		return false
	}
	for _, n := range pkg.Scope().Names() {
		if tn, ok := pkg.Scope().Lookup(n).(*types.TypeName); ok && tn.Exported() {
			if m, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), true, pkg, name); m != nil {
				if _, isFunc := m.(*types.Func); isFunc {
					return true
				}
			}
		}
	}
	return false
}

// qualified matches pkg.Name and pkg.Name.Member.
var qualified = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z]\w*(?:\.[A-Z]\w*)?)`)

// codeSpan matches markdown inline code.
var codeSpan = regexp.MustCompile("`[^`\n]+`")

// checkMarkdown checks the qualified names in a markdown file's inline code
// and fenced code blocks.
func (s *symbols) checkMarkdown(file, src string) []string {
	var bad []string
	fenced := false
	sc := bufio.NewScanner(strings.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		code := []string{line}
		if !fenced {
			code = codeSpan.FindAllString(line, -1)
		}
		for _, c := range code {
			bad = append(bad, s.checkQualified(fmt.Sprintf("%s:%d", file, n), c, nil)...)
		}
	}
	return bad
}

// checkQualified checks every pkg.Name in text whose pkg is a module
// package (or, with imports, a package the file imports by that name).
func (s *symbols) checkQualified(where, text string, imports map[string]*types.Package) []string {
	var bad []string
	for _, m := range qualified.FindAllStringSubmatch(text, -1) {
		pkg := imports[m[1]]
		if pkg == nil {
			pkg = s.byName[m[1]]
		}
		if pkg != nil && !resolves(pkg, m[2]) {
			bad = append(bad, fmt.Sprintf("%s: %s.%s names no exported symbol of %s", where, m[1], m[2], pkg.Path()))
		}
	}
	return bad
}

// docLink matches a doc link: [Name], [Name.Member], [pkg.Name],
// [pkg.Name.Member], each optionally starred. The character before the
// bracket must not continue an expression (m[Index] is an index).
var docLink = regexp.MustCompile(`(^|[^\w\])])\[\*?(?:([a-z][a-z0-9/.]*)\.)?([A-Z]\w*(?:\.[A-Z]\w*)?)\]`)

// checkComments checks the doc comments of the Go files in dir (tests
// left out): qualified names everywhere, doc links outside code blocks.
func (s *symbols) checkComments(t *testing.T, dir string) []string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var bad []string
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(s.fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		imports := s.fileImports(f)
		for _, c := range docComments(f) {
			where := strings.TrimPrefix(s.fset.Position(c.Pos()).String(), s.root+"/")
			text := c.Text()
			if c.links {
				bad = append(bad, s.checkLinks(where, text, s.pkgs[dir], imports)...)
				text = docLink.ReplaceAllString(text, "$1")
			}
			bad = append(bad, s.checkQualified(where, text, imports)...)
		}
	}
	return bad
}

// checkLinks checks the doc links of a comment, outside its code blocks.
func (s *symbols) checkLinks(where, text string, self *types.Package, imports map[string]*types.Package) []string {
	var bad []string
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			continue // a code block
		}
		for _, m := range docLink.FindAllStringSubmatch(line, -1) {
			pkg := self
			if m[2] != "" {
				if pkg = imports[m[2]]; pkg == nil {
					pkg = s.byName[m[2]]
				}
				if pkg == nil {
					pkg = s.byPath[m[2]] // [context.Context] when nothing here imports context
				}
				if pkg == nil {
					continue // a package the module does not use: not checked
				}
			}
			if !resolves(pkg, m[3]) {
				bad = append(bad, fmt.Sprintf("%s: doc link %s names no exported symbol of %s", where, m[0][len(m[1]):], pkg.Path()))
			}
		}
	}
	return bad
}

// fileImports maps the names a file imports packages under to them.
func (s *symbols) fileImports(f *ast.File) map[string]*types.Package {
	m := map[string]*types.Package{}
	for _, is := range f.Imports {
		path := strings.Trim(is.Path.Value, `"`)
		pkg := s.byPath[path]
		if pkg == nil {
			continue
		}
		name := pkg.Name()
		if is.Name != nil {
			name = is.Name.Name
		}
		m[name] = pkg
	}
	return m
}

// comment is a doc comment, or a comment inside a declaration (a struct
// field's, a constant's), which go doc shows as code: no doc links there.
type comment struct {
	*ast.CommentGroup
	links bool
}

// docComments returns a file's doc comments and its declarations' inner
// comments.
func docComments(f *ast.File) []comment {
	var cs []comment
	add := func(cg *ast.CommentGroup, links bool) {
		if cg != nil {
			cs = append(cs, comment{cg, links})
		}
	}
	add(f.Doc, true)
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			add(d.Doc, true)
		case *ast.GenDecl:
			add(d.Doc, true)
			single := len(d.Specs) == 1 && d.Lparen == token.NoPos
			for _, spec := range d.Specs {
				ast.Inspect(spec, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.TypeSpec:
						add(n.Doc, single)
						add(n.Comment, false)
					case *ast.ValueSpec:
						add(n.Doc, single)
						add(n.Comment, false)
					case *ast.Field:
						add(n.Doc, false)
						add(n.Comment, false)
					}
					return true
				})
			}
		}
	}
	return cs
}
