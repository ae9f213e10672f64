package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// productNames are names declared as Go identifiers that are also the
// names users know things by: a string may say them.
var productNames = map[string]bool{
	"PostgreSQL": true, "MariaDB": true, "MySQL": true, "SQLite": true, "SQLServer": true,
	"QphH": true, "OrderStatus": true, "StockLevel": true, "NewOrder": true,
	// Names that are not oltplab's though declared in it: the kernel's key
	// in /proc/meminfo, database/sql's method in a driver's impossible
	// case, a wait class out of range (a bug's trace).
	"MemAvailable": true, "QueryContext": true, "WaitClass": true,
}

// testOnly are the packages only tests import: their text is for
// developers.
var testOnly = map[string]bool{"conformance": true, "dbtest": true, "testenv": true, "tpchref": true}

// TestNoGoNamesInUserText: what oltplab says to its users (messages,
// warnings stored with results, report text, help) names things as users
// know them, never by a Go function or type of its own: a string literal
// in a non-test file that holds, as a word, an exported CamelCase name
// (two capitals or more, e.g. MergeShards) declared in oltplab's code is
// an internal name leaking out. Doc comments may use them freely.
func TestNoGoNamesInUserText(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || testOnly[d.Name()] || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	camel := regexp.MustCompile(`^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+$`)
	declared := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				declared[d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						declared[ts.Name.Name] = true
					}
				}
			}
		}
	}
	for n := range declared {
		if !camel.MatchString(n) || productNames[n] || !ast.IsExported(n) {
			delete(declared, n)
		}
	}
	if !declared["MergeShards"] {
		t.Fatalf("found %d declared names, not MergeShards: the scan is wrong", len(declared))
	}
	word := regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*`)
	var leaks []string
	for _, f := range files {
		tags := map[*ast.BasicLit]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if fl, ok := n.(*ast.Field); ok && fl.Tag != nil {
				tags[fl.Tag] = true
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ImportSpec:
				return false
			case *ast.BasicLit:
				if n.Kind != token.STRING || tags[n] {
					return false
				}
				s, err := strconv.Unquote(n.Value)
				if err != nil {
					return false
				}
				for _, w := range word.FindAllString(s, -1) {
					if declared[w] {
						leaks = append(leaks, fset.Position(n.Pos()).String()+": "+w)
					}
				}
			}
			return true
		})
	}
	sort.Strings(leaks)
	for _, l := range leaks {
		t.Errorf("a Go name in text users read: %s", l)
	}
}
