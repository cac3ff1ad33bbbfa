package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function of ours may be, in lines from its func keyword to its
// closing brace (issue 51, "No function is over 100 lines"; STYLE.md 1: short functions).
const maxFuncLines = 100

// TestFunctionLength fails naming every function of a non-test Go file tracked by git (the
// interop tree, scripts and generated tools included) that is longer than maxFuncLines.
func TestFunctionLength(t *testing.T) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	dir := strings.TrimSpace(string(root))
	out, err := exec.Command("git", "-C", dir, "ls-files", "*.go").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, name := range strings.Fields(string(out)) {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		n++
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Type.Pos()).Line + 1
			if lines > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines (at most %d)", name, fset.Position(fn.Pos()).Line, funcName(fn), lines, maxFuncLines)
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d non-test Go files found under %s", n, dir)
	}
}

// funcName is fn's name as a reader searches for it: Recv.Name for a method, Name otherwise.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
