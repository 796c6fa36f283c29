package mount

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// LoadDir copies the host directory dir into the model at its root through
// p (directories, regular files with their bytes and permission bits,
// symlinks) and makes it durable with sync(2). The host is only read.
func LoadDir(p *sim.Process, dir string) error {
	err := filepath.WalkDir(dir, func(host string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, host)
		name := "/" + filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		perm := uint32(fi.Mode().Perm())
		switch {
		case d.IsDir():
			err = p.Mkdir(name, perm)
		case d.Type()&fs.ModeSymlink != 0:
			var target string
			if target, err = os.Readlink(host); err == nil {
				err = p.Symlink(target, name)
			}
		case d.Type().IsRegular():
			var b []byte
			if b, err = os.ReadFile(host); err != nil {
				return err
			}
			var fd int
			if fd, err = p.Open(name, unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, perm); err != nil {
				break
			}
			for off := 0; off < len(b) && err == nil; {
				var n int
				n, err = p.Write(fd, b[off:])
				off += n
			}
			if cerr := p.Close(fd); err == nil {
				err = cerr
			}
		default:
			return fmt.Errorf("--root %s: %s is a %s: only directories, regular files and symlinks are copied", dir, rel, fi.Mode().Type())
		}
		if err != nil {
			return fmt.Errorf("--root %s: %s: %v", dir, rel, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.Sync()
	return nil
}

// Load copies the host directory dir into the model (LoadDir, by the
// server's own process).
func (s *Server) Load(dir string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return LoadDir(s.procOf(0), dir)
}
