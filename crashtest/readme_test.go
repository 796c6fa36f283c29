package crashtest

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeExample requires the README's "As a Go library" code to be
// example_test.go, character for character, so the README shows code that
// compiles and whose output go test checks.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	example, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## As a Go library\n")
	require.True(t, ok, "README.md has no \"## As a Go library\" section")
	_, code, ok := strings.Cut(section, "\n```go\n")
	require.True(t, ok, "the section has no ```go block")
	code, _, ok = strings.Cut(code, "\n```\n")
	require.True(t, ok, "the ```go block is not closed")
	require.Equal(t, string(example), code+"\n", "README.md's example differs from crashtest/example_test.go")
}
