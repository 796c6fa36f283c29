package crashtest

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/crash"
)

// TestExploreDocListsEveryModel reads Explore's doc comment from the source and
// requires an entry for every model crash knows, with the model's own Doc.
func TestExploreDocListsEveryModel(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "crashtest.go", nil, parser.ParseComments)
	require.NoError(t, err)
	p, err := doc.NewFromFiles(fset, []*ast.File{f}, "github.com/iosim/iosim/crashtest")
	require.NoError(t, err)
	var explore string
	for _, fn := range p.Funcs {
		if fn.Name == "Explore" {
			explore = strings.Join(strings.Fields(fn.Doc), " ")
		}
	}
	require.NotEmpty(t, explore, "no doc comment on Explore")
	names := crash.ModelNames()
	require.NotEmpty(t, names)
	for _, name := range names {
		ms, err := crash.ParseModels(name)
		require.NoError(t, err)
		require.Len(t, ms, 1)
		label := `- "` + name + `"`
		if ms[0].Hypothetical {
			label += " (hypothetical, opt-in)"
		}
		entry := label + ": " + strings.Join(strings.Fields(ms[0].Doc), " ")
		require.Contains(t, explore, entry, "Explore's doc lacks model %q, or its description differs from crash's", name)
	}
}
