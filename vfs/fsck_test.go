package vfs

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func fsckTree(t *testing.T) (*FS, *Inode, *Inode) {
	t.Helper()
	fs := New()
	require.NoError(t, fs.MkdirAll("/a/b", 0o755))
	f, err := fs.Create("/a/f")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, fs.SymlinkIfPossible("f", "/a/l"))
	a, err := fs.Root().Resolve("/a", false)
	require.NoError(t, err)
	file, err := fs.Root().Resolve("/a/f", false)
	require.NoError(t, err)
	return fs, a, file
}

func TestFsckCleanTree(t *testing.T) {
	fs, _, _ := fsckTree(t)
	require.Empty(t, fs.Fsck())
	require.NoError(t, fs.Remove("/a/f"))
	require.NoError(t, fs.Remove("/a/b"))
	require.Empty(t, fs.Fsck())
}

func TestFsckFindsCorruption(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(fs *FS, a, file *Inode)
		want    string
	}{
		{"file link count", func(_ *FS, _, file *Inode) { file.nlink = 2 }, "inode 5 (f): link count 2, but 1 names in the tree"},
		{"second name not counted", func(_ *FS, a, file *Inode) { a.entries["g"] = file; a.sorted = nil }, "inode 5 (f): link count 1, but 2 names in the tree"},
		{"dead entry", func(_ *FS, _, file *Inode) { file.nlink = 0 }, "/a/f: entry names inode 5, which has no links"},
		{"directory link count", func(_ *FS, a, _ *Inode) { a.nlink = 4 }, "/a: directory has link count 4, want 3 (2 + 1 subdirectories)"},
		{"dotdot", func(fs *FS, a, _ *Inode) { a.parent = a.entries["b"] }, "/a: \"..\" is inode"},
		{"directory with two names", func(fs *FS, a, _ *Inode) { fs.root.entries["c"] = a.entries["b"]; fs.root.sorted = nil }, "/c: directory inode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, a, file := fsckTree(t)
			tc.corrupt(fs, a, file)
			got := fs.Fsck()
			require.NotEmpty(t, got)
			require.Contains(t, got[0]+"\n"+got[len(got)-1], tc.want)
		})
	}
}

// TestFsckCleanAfterAnyChanges: whatever names a program makes, renames and
// removes, the tree stays consistent.
func TestFsckCleanAfterAnyChanges(t *testing.T) {
	paths := []string{"/a", "/b", "/a/c", "/a/d", "/b/c", "/a/c/e"}
	rapid.Check(t, func(t *rapid.T) {
		fs := New()
		for range rapid.IntRange(1, 30).Draw(t, "n") {
			p := rapid.SampledFrom(paths).Draw(t, "p")
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0:
				_ = fs.Mkdir(p, 0o755)
			case 1:
				if f, err := fs.Create(p); err == nil {
					_ = f.Close()
				}
			case 2:
				_ = fs.Remove(p)
			case 3:
				_ = fs.Rename(p, rapid.SampledFrom(paths).Draw(t, "q"))
			case 4:
				_ = fs.SymlinkIfPossible("x", p)
			}
			require.Empty(t, fs.Fsck())
		}
	})
}
