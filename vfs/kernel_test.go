package vfs_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestContractDocumented: every method of Inode is placed in the contract its
// doc lists, and every method of Kernel in the list of kernel-model hooks its
// doc gives, so that a method added to either type has been put on one side
// or the other on purpose (an ext4 quirk belongs on Kernel).
func TestContractDocumented(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var files []*ast.File
	for _, name := range names {
		if !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			require.NoError(t, err)
			files = append(files, f)
		}
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/iosim/iosim/vfs")
	require.NoError(t, err)
	lists := map[string][2]string{
		"Inode":  {"Its methods are the file-system contract", "Kernel returns the hooks"},
		"Kernel": {"They are", "Each states"},
	}
	seen := 0
	for _, ty := range p.Types {
		marks, ok := lists[ty.Name]
		if !ok {
			continue
		}
		seen++
		start, end := strings.Index(ty.Doc, marks[0]), strings.Index(ty.Doc, marks[1])
		require.True(t, start >= 0 && end > start, "%s's doc has lost its method list", ty.Name)
		list := ty.Doc[start:end]
		require.NotEmpty(t, ty.Methods)
		for _, m := range ty.Methods {
			if ty.Name == "Inode" && m.Name == "Kernel" {
				continue // the way to the hooks, named after the list
			}
			named := regexp.MustCompile(`\b` + m.Name + `\b`).MatchString(list)
			require.True(t, named, "%s.%s is not in the list of %s's doc: the contract or a kernel hook?", ty.Name, m.Name, ty.Name)
		}
	}
	require.Equal(t, len(lists), seen)
}
