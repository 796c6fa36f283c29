package scenarios

import (
	"path/filepath"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// TestScenarios runs every scenario file of this directory through
// datadriven (go test ./scenarios -rewrite regenerates their outputs).
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("*" + Ext)
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(path, func(t *testing.T) {
			s := New(path)
			datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
				out, err := s.Exec(td)
				if err != nil {
					t.Fatal(err)
				}
				return out
			})
		})
	}
}
