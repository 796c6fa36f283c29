// Package layers holds the test that keeps iosim's dependency graph pointing down:
// cmd → scenarios → replay / bundle / fio / crashtest → strace / crash → interposer /
// stdio → sim → vfs / device → faultrule. A package may
// import only packages of lower rank (or the same package's test helpers).
package layers

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rank orders the project's packages; imports must go to a strictly lower rank.
// Packages at the same rank (strace, replay, crash, scenario) do not import each
// other except as listed in sameRankOK.
var rank = map[string]int{
	"faultrule":  0,
	"vfs":        1,
	"device":     1,
	"sim":        2,
	"interposer": 3,
	"stdio":      3,
	"strace":     4,
	"crash":      4,
	"replay":     5,
	"bundle":     5,
	"fio":        5,
	"crashtest":  5,
	"scenarios":  6,
	"cmd/iosim":  7,
}

func pkgOf(dir string) (string, bool) {
	for p := range rank {
		if dir == p || strings.HasPrefix(dir, p+"/") {
			return p, true
		}
	}
	return "", false
}

// modulePath is the path on go.mod's module line.
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1]
		}
	}
	return ""
}

func TestImportsPointDown(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	module := modulePath(gomod)
	require.NotEmpty(t, module, "go.mod names no module")
	checked := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		from, ok := pkgOf(filepath.ToSlash(rel))
		if !ok {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, module+"/") {
				continue
			}
			to, ok := pkgOf(strings.TrimPrefix(p, module+"/"))
			if !ok || to == from {
				continue
			}
			checked++
			if rank[to] >= rank[from] {
				t.Errorf("%s imports %s: dependencies must point down (%s has rank %d, %s rank %d)", path[len(root)+1:], p, from, rank[from], to, rank[to])
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Positive(t, checked, "no project imports found: is the test looking at the right tree?")
}
