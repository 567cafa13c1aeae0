package testpeer

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTestsStartChildrenThatDieWithThem reads every test file of the
// module: none starts a program with exec.Command or exec.CommandContext,
// whose child would outlive a test binary that timed out or panicked (a
// Caddy left serving takes part of the next run's connections, since it
// listens with SO_REUSEPORT). Command and CommandContext are the way.
func TestTestsStartChildrenThatDieWithThem(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, call := range execCommandCalls(f) {
			rel, _ := filepath.Rel(root, fset.Position(call.Pos()).Filename)
			t.Errorf("%s:%d: exec.%s: start the child with testpeer.%[3]s, which dies with the test binary",
				rel, fset.Position(call.Pos()).Line, call.Sel.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// execCommandCalls are f's uses of os/exec's Command and CommandContext.
func execCommandCalls(f *ast.File) []*ast.SelectorExpr {
	local := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"os/exec"` {
			local = "exec"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil
	}
	var found []*ast.SelectorExpr
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == local && (sel.Sel.Name == "Command" || sel.Sel.Name == "CommandContext") {
			found = append(found, sel)
		}
		return true
	})
	return found
}

// moduleRoot is the directory of the module's go.mod, above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = parent
	}
}
