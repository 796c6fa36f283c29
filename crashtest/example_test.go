package crashtest_test

import (
	"fmt"
	"strings"

	"github.com/spf13/afero"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/crash"
	"github.com/iosim/iosim/crashtest"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// save replaces dir/state with data: write a temporary file, fsync it, rename
// it over the old one and, if syncDir, fsync the directory. It is written
// against sim.Unix, so the same code runs on the model (a *sim.Process) in
// tests and on Linux (osunix.Kernel{}) in production.
func save(sys sim.Unix, dir string, data []byte, syncDir bool) error {
	fd, err := sys.Open(dir+"/state.tmp", unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := sys.Write(fd, data); err != nil {
		return err
	}
	if err := sys.Fsync(fd); err != nil {
		return err
	}
	if err := sys.Close(fd); err != nil {
		return err
	}
	if err := sys.Rename(dir+"/state.tmp", dir+"/state"); err != nil {
		return err
	}
	if !syncDir {
		return nil
	}
	d, err := sys.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	if err := sys.Fsync(d); err != nil {
		return err
	}
	return sys.Close(d)
}

// Every crash state of save under ext4's default rules, checked: once the
// program has said "saved", /db/state must hold the new data.
func ExampleRun() {
	for _, syncDir := range []bool{false, true} {
		rep, err := crashtest.Run("ext4-ordered", func(env *crash.Env) error {
			if err := save(env.Proc, "/db", []byte("new"), syncDir); err != nil {
				return err
			}
			_, err := fmt.Fprintln(env.Stdout, "saved")
			return err
		}, func(s *crash.State) error {
			got, _ := s.ReadFile("/db/state")
			if string(s.Stdout) == "saved\n" && string(got) != "new" {
				return fmt.Errorf("said saved, but /db/state holds %q", got)
			}
			return nil
		}, crashtest.WithSetup(func(fs *vfs.FS) error {
			if err := fs.Mkdir("/db", 0o755); err != nil {
				return err
			}
			return afero.WriteFile(fs, "/db/state", []byte("old"), 0o644)
		}))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("fsync of the directory %v: %d crash states, %d fail\n", syncDir, rep.Checked, rep.Failed)
		for _, f := range rep.Findings {
			fmt.Printf("  %s: %s\n", f.Property, strings.Join(f.Messages, "; "))
			for _, c := range f.Calls {
				fmt.Printf("    %s: %s %s (line %v)\n", c.Role, c.Call, c.Path, c.Lines)
			}
		}
	}
	// Output:
	// fsync of the directory false: 8 crash states, 1 fail
	//   durability: check: said saved, but /db/state holds "old"
	//     lost: renameat /db/state.tmp -> /db/state (line [34])
	// fsync of the directory true: 8 crash states, 0 fail
}
