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
	"unicode"
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
	src := `// Package planted names [Cluster], [hw.Netlist.Trace], [hw.Netlist.Gone], lpt.LineByName and lpt.NoSuchLine.
package planted

import "github.com/ttlpapers/ttlpapers/hw"

// Board is a board; see [Board.Size] and [context.Context], and
//
//	x := m[Index] // code: not a link
type Board struct{ b *hw.Netlist }
`
	if err := os.WriteFile(filepath.Join(dir, "planted.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	syms.pkgs[dir] = types.NewPackage("example.com/planted", "planted")
	got = syms.checkComments(t, dir)
	for _, want := range []string{"[Cluster]", "[hw.Netlist.Gone]", "lpt.NoSuchLine", "[Board.Size]"} {
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

// The docs must also not point outside the tree: every file, heading, test
// and seed that a markdown doc or a Go comment cites must exist, and
// nothing may cite the background notes that are not in the repository
// (docs/seeds.md says where the seeds are).

// TestDocTargets checks every such citation in the module.
func TestDocTargets(t *testing.T) {
	tr := loadTree(t)
	var bad []string
	for _, path := range tr.files {
		src, err := os.ReadFile(filepath.Join(tr.root, path))
		if err != nil {
			t.Fatal(err)
		}
		bad = append(bad, tr.check(t, path, string(src))...)
	}
	for _, b := range bad {
		t.Error(b)
	}
	if tr.seedDir == "" {
		t.Logf("no shared/seeds above %s: the seed files cited were checked against docs/seeds.md only", tr.root)
	}
}

// TestDocTargetsCatchDrift plants citations of things that are not in the
// tree and checks that each is reported.
func TestDocTargetsCatchDrift(t *testing.T) {
	tr := loadTree(t)
	md := "As " + notes + " §5 says, and " + notes + ".md; see docs/nosuch.md and docs/protocol.md, \"No Such Heading\".\n" +
		"[the barrier](protocol.md#no-such-anchor), [gone](gone.md), [fine](protocol.md#barrier), docs/protocol.md, \"Barrier\".\n" +
		"`TestPlantedButAbsent` checks it, beside `TestDocTargets` and testing.BenchmarkResult; papers/nosuch.go, cmd/papersctl/internal/measure.LoopOverhead.\n" +
		"The seed is ../shared/seeds/nosuch_1995.txt, not ../shared/seeds/ttl_papers_design_1995.txt; /dev/parport0.\n"
	got := tr.check(t, "docs/planted.md", md)
	want := []string{notes + " §5", notes + ".md", "docs/nosuch.md", `"No Such Heading"`, "#no-such-anchor", "gone.md", "TestPlantedButAbsent", "papers/nosuch.go", "nosuch_1995.txt"}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("planted %s not reported; got %q", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d reports for %d bad citations: %q", len(got), len(want), got)
	}
	src := "package planted\n\n// Do it as docs/registers.md, \"Inversions\", says, not as docs/registers.md, \"Reversions\";\n" +
		"// TestPlantedAndGone checks it (" + notes + " §2).\nfunc F() { _ = \"docs/nosuch.md in a string is not a citation\" }\n"
	got = tr.check(t, "planted/planted.go", src)
	for _, w := range []string{`"Reversions"`, "TestPlantedAndGone", notes + " §2"} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("planted %s not reported in Go; got %q", w, got)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d reports for 3 bad citations in Go: %q", len(got), got)
	}
}

// notes is the name of the background notes that are not in the
// repository, spelled so that this file does not cite them.
const notes = "SP" + "EC"

// tree is what citations may name: the repository's files, the test
// functions declared in it, and the seeds.
type tree struct {
	root     string
	files    []string        // tracked *.md and *.go files
	top      map[string]bool // the repository's top-level entries
	tests    map[string]bool // Test, Benchmark, Fuzz and Example functions
	seeds    map[string]bool // seed file names, from docs/seeds.md
	seedDir  string          // shared/seeds above the checkout, if there
	headings map[string][]string
}

func loadTree(t *testing.T) *tree {
	t.Helper()
	tr := &tree{top: map[string]bool{}, tests: map[string]bool{}, seeds: map[string]bool{}, headings: map[string][]string{}}
	tr.root = goList(t, "-m", "-f", "{{.Dir}}")[0]
	out, err := exec.Command("git", "-C", tr.root, "ls-files").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	fset := token.NewFileSet()
	for _, path := range strings.Fields(string(out)) {
		tr.top[strings.Split(path, "/")[0]] = true
		if !strings.HasSuffix(path, ".md") && !strings.HasSuffix(path, ".go") {
			continue
		}
		tr.files = append(tr.files, path)
		if !strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(tr.root, path), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && testFunc.MatchString(fd.Name.Name) {
				tr.tests[fd.Name.Name] = true
			}
		}
	}
	seeds, err := os.ReadFile(filepath.Join(tr.root, "docs", "seeds.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("`([\\w.-]+\\.txt)`").FindAllStringSubmatch(string(seeds), -1) {
		tr.seeds[m[1]] = true
	}
	if len(tr.seeds) == 0 {
		t.Fatal("docs/seeds.md names no seed files")
	}
	for d := tr.root; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, "shared", "seeds")); err == nil && fi.IsDir() {
			tr.seedDir = filepath.Join(d, "shared", "seeds")
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return tr
}

var (
	// spec matches a citation of the background notes that are not in
	// the repository (a flag's SPEC metavariable is not one).
	spec = regexp.MustCompile(`\bSPEC(?:\.md\b|\s*§\s*\d*)`)
	// repoPath matches a slash-separated path; the caller keeps those
	// whose first element is in the tree (or ../shared/seeds/).
	repoPath = regexp.MustCompile(`(?:^|[^\w./~-])((?:\.\./shared/)?[A-Za-z_][\w.-]*(?:/[\w.-]+)+)([<*{$…]?)`)
	// mdLink matches a markdown link's target.
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// section matches the heading cited after a file: , "Heading".
	section = regexp.MustCompile(`^\)?,? ["“]([^"”]+)["”]`)
	// testRef matches a test, benchmark, fuzz target or example by name.
	testRef  = regexp.MustCompile(`(?:^|[^\w.])((?:Test|Benchmark|Fuzz|Example)[A-Z_]\w*)`)
	testFunc = regexp.MustCompile(`^(?:Test|Benchmark|Fuzz|Example)`)
)

// check reports the citations in one file (path relative to the root)
// that name nothing in the tree: in a markdown file its whole text, in a
// Go file its comments (and, for the notes not in the repository, its
// strings too, as a command's help text is documentation).
func (tr *tree) check(t *testing.T, path, src string) []string {
	t.Helper()
	var bad []string
	for _, m := range spec.FindAllStringIndex(src, -1) {
		bad = append(bad, fmt.Sprintf("%s:%d: %q cites notes that are not in the repository: cite a file of docs/", path, lineOf(src, m[0]), src[m[0]:m[1]]))
	}
	if strings.HasSuffix(path, ".go") {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, cg := range f.Comments {
			line := fset.Position(cg.Pos()).Line
			for _, b := range tr.checkText(path, cg.Text()) {
				bad = append(bad, fmt.Sprintf("%s:%d: %s", path, line+b.line-1, b.msg))
			}
		}
		return bad
	}
	for _, b := range tr.checkText(path, src) {
		bad = append(bad, fmt.Sprintf("%s:%d: %s", path, b.line, b.msg))
	}
	return bad
}

type finding struct {
	line int
	msg  string
}

// checkText checks the file paths, markdown links and test names in text,
// which comes from file (whose directory relative links start from).
func (tr *tree) checkText(file, text string) []finding {
	var bad []finding
	report := func(at int, format string, a ...any) {
		bad = append(bad, finding{lineOf(text, at), fmt.Sprintf(format, a...)})
	}
	for _, m := range repoPath.FindAllStringSubmatchIndex(text, -1) {
		p := strings.TrimRight(text[m[2]:m[3]], ".")
		if m[5] > m[4] { // a pattern (kicad/ttl_papers_<n>pe), not a path
			continue
		}
		if seed, ok := strings.CutPrefix(p, "../shared/seeds/"); ok {
			if msg := tr.seedMissing(seed); msg != "" {
				report(m[2], "%s: %s", p, msg)
			}
			continue
		}
		if !tr.top[strings.Split(p, "/")[0]] {
			continue // not in the repository: an import path, a system file
		}
		if !tr.exists(p) {
			report(m[2], "%s: no such file or directory in the repository", p)
			continue
		}
		if msg := tr.sectionMissing(p, text[m[1]+len(p)-(m[3]-m[2]):]); msg != "" {
			report(m[2], "%s", msg)
		}
	}
	if strings.HasSuffix(file, ".md") {
		for _, m := range mdLink.FindAllStringSubmatchIndex(text, -1) {
			target := text[m[2]:m[3]]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			p, anchor, _ := strings.Cut(target, "#")
			if p == "" {
				p = file
			} else {
				p = filepath.ToSlash(filepath.Join(filepath.Dir(file), p))
			}
			switch {
			case !tr.exists(p):
				report(m[0], "link %s: no such file in the repository", target)
			case anchor != "" && !slices.Contains(tr.anchors(p), anchor):
				report(m[0], "link %s: %s has no heading with that anchor", target, p)
			default:
				if msg := tr.sectionMissing(p, text[m[1]:]); msg != "" {
					report(m[0], "%s", msg)
				}
			}
		}
	}
	for _, m := range testRef.FindAllStringSubmatchIndex(text, -1) {
		if name := text[m[2]:m[3]]; !tr.tests[name] {
			report(m[2], "%s: no test, benchmark, fuzz target or example of that name in the repository", name)
		}
	}
	return bad
}

// seedMissing says what is wrong with a cited seed file, or "".
func (tr *tree) seedMissing(name string) string {
	if !tr.seeds[name] {
		return "not a seed that docs/seeds.md lists"
	}
	if tr.seedDir != "" {
		if _, err := os.Stat(filepath.Join(tr.seedDir, name)); err != nil {
			return fmt.Sprintf("not in %s", tr.seedDir)
		}
	}
	return ""
}

// exists reports whether path (relative to the root) is in the tree. A
// Go name after a package's directory (lpt/backend.Open) is not part of
// the path.
func (tr *tree) exists(path string) bool {
	if _, err := os.Stat(filepath.Join(tr.root, path)); err == nil {
		return true
	}
	dir, name := filepath.Split(path)
	if i := strings.Index(name, "."); i > 0 && i+1 < len(name) && 'A' <= name[i+1] && name[i+1] <= 'Z' {
		if fi, err := os.Stat(filepath.Join(tr.root, dir, name[:i])); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// sectionMissing checks the heading cited right after a markdown file
// (`docs/timing.md, "The model"`), if any: "" when there is none or it exists.
func (tr *tree) sectionMissing(path, after string) string {
	if !strings.HasSuffix(path, ".md") {
		return ""
	}
	m := section.FindStringSubmatch(after)
	if m == nil {
		return ""
	}
	cited := strings.Join(strings.Fields(m[1]), " ") // a citation may wrap
	for _, h := range tr.heads(path) {
		if h == cited || strings.ReplaceAll(h, "`", "") == strings.ReplaceAll(cited, "`", "") {
			return ""
		}
	}
	return fmt.Sprintf("%s has no heading %q", path, cited)
}

// heads returns the headings of a markdown file of the tree.
func (tr *tree) heads(path string) []string {
	if h, ok := tr.headings[path]; ok {
		return h
	}
	src, _ := os.ReadFile(filepath.Join(tr.root, path))
	var hs []string
	fenced := false
	for line := range strings.Lines(string(src)) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if t, ok := strings.CutPrefix(line, "#"); ok && !fenced {
			hs = append(hs, strings.TrimSpace(strings.TrimLeft(t, "#")))
		}
	}
	tr.headings[path] = hs
	return hs
}

// anchors returns the anchors GitHub gives a markdown file's headings:
// lower case, punctuation dropped, spaces as hyphens.
func (tr *tree) anchors(path string) []string {
	var as []string
	for _, h := range tr.heads(path) {
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		as = append(as, b.String())
	}
	return as
}

// lineOf is the 1-based line of offset i in s.
func lineOf(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }
