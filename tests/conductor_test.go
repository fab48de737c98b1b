package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// stageCaches are the types that hold what one build keeps for the next;
// only internal/build makes them (build.Options.KeepWarm).
var stageCaches = map[string]bool{
	"book.Cache": true, "expand.Cache": true, "render.Cache": true,
	"site.Incremental": true, "verify.FragmentCache": true,
}

// TestServeMakesNoStageCache checks that internal/serve constructs none of
// the stages' caches: the build owns what lives between builds, and serve
// knows only what to watch and how to push reloads.
func TestServeMakesNoStageCache(t *testing.T) {
	files, err := filepath.Glob("../internal/serve/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in internal/serve: %v", err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			var typ ast.Expr
			switch x := n.(type) {
			case *ast.CompositeLit:
				typ = x.Type
			case *ast.CallExpr:
				if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "new" && len(x.Args) == 1 {
					typ = x.Args[0]
				}
			}
			if sel, ok := typ.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && stageCaches[pkg.Name+"."+sel.Sel.Name] {
					t.Errorf("%s: serve constructs a %s.%s; the build owns the caches kept between builds (build.Options.KeepWarm)", fset.Position(n.Pos()), pkg.Name, sel.Sel.Name)
				}
			}
			return true
		})
	}
}
