//go:build linux

package vfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/afero"
	"github.com/stretchr/testify/require"
)

// renameTree is the tree each case of TestAferoRenameAsOsRename starts from.
func renameTree(fs afero.Fs, symlink func(oldname, newname string) error) error {
	for _, d := range []string{"d", "e", "e/x"} {
		if err := fs.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	for name, data := range map[string]string{"a": "A", "b": "B", "e/f": "F"} {
		if err := afero.WriteFile(fs, name, []byte(data), 0o644); err != nil {
			return err
		}
	}
	if err := symlink("d", "s"); err != nil {
		return err
	}
	return symlink("a", "t")
}

// renameListing describes the tree under fs: each path with its type, and a
// regular file's bytes, a symlink's target.
func renameListing(t *testing.T, fs afero.Fs) string {
	var out []string
	err := afero.Walk(fs, ".", func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := fs.(afero.LinkReader).ReadlinkIfPossible(p)
			if err != nil {
				return err
			}
			out = append(out, p+" -> "+target)
		case fi.IsDir():
			out = append(out, p+"/")
		default:
			b, err := afero.ReadFile(fs, p)
			if err != nil {
				return err
			}
			out = append(out, p+" "+string(b))
		}
		return nil
	})
	require.NoError(t, err)
	sort.Strings(out)
	return strings.Join(out, " ")
}

// renameOutcome is what a rename returned: nil, or the error's type, Op, Old,
// New (relative to the tree) and errno.
func renameOutcome(err error, base string) string {
	if err == nil {
		return "ok"
	}
	var le *os.LinkError
	if !errors.As(err, &le) || error(le) != err {
		return fmt.Sprintf("%T %v", err, err)
	}
	errno, ok := le.Err.(syscall.Errno)
	if !ok {
		return fmt.Sprintf("*os.LinkError with %T %v", le.Err, le.Err)
	}
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, base), "/") }
	return fmt.Sprintf("*os.LinkError{%s %s %s %v}", le.Op, rel(le.Old), rel(le.New), errno)
}

// TestAferoRenameAsOsRename runs each rename with the afero face and with
// os.Rename in a temporary directory of the real file system, from the same
// tree, and requires the same error (type, fields, errno) and the same tree
// after.
func TestAferoRenameAsOsRename(t *testing.T) {
	for _, c := range []struct{ old, new string }{
		{"a", "n"},        // a file to a new name
		{"a", "b"},        // a file over a file
		{"d", "n"},        // a directory to a new name
		{"d", "e/x"},      // a directory onto an empty directory: os.Rename refuses (EEXIST), rename(2) would not
		{"d", "e"},        // a directory onto a non-empty directory
		{"a", "d"},        // a file onto a directory
		{"d", "a"},        // a directory onto a file
		{"a", "s"},        // a file over a symlink to a directory (the symlink is replaced)
		{"d", "s"},        // a directory over a symlink
		{"a", "s/"},       // a file onto a symlink to a directory, with a trailing slash
		{"nx", "d"},       // a missing name onto a directory: the missing name's error
		{"nx", "n"},       // a missing name
		{"d", "d"},        // a directory onto itself
		{"a", "a"},        // a file onto itself
		{"t", "a"},        // a symlink onto the file it names
		{"e", "e/x/in"},   // a directory into its own subdirectory
		{"a", "b/x"},      // under a file
		{"e/f", "d/f"},    // across directories
		{"d", "nx/d"},     // into a missing directory
		{"e/x", "e/../d"}, // a directory onto a directory named through ".."
		{"d", "e/../d"},   // a directory onto itself by another name: allowed
	} {
		t.Run(c.old+"->"+c.new, func(t *testing.T) {
			real := t.TempDir()
			osFs := afero.NewBasePathFs(afero.NewOsFs(), real)
			require.NoError(t, renameTree(osFs, func(o, n string) error { return os.Symlink(o, filepath.Join(real, n)) }))
			// Not filepath.Join: it would clean "e/../d" and drop a trailing slash.
			want := renameOutcome(os.Rename(real+"/"+c.old, real+"/"+c.new), real)
			wantTree := renameListing(t, osFs)

			model := New()
			require.NoError(t, renameTree(model, model.SymlinkIfPossible))
			got := renameOutcome(model.Rename(c.old, c.new), "")
			require.Equal(t, want, got, "rename %s %s: os.Rename, afero face", c.old, c.new)
			require.Equal(t, wantTree, renameListing(t, model), "the tree after")
		})
	}
}
