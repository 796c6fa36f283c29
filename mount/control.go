package mount

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// SocketPath is the unix socket of the mount at dir, where 'iosim ctl'
// sends its commands: a name in the temporary directory made from dir's
// absolute path (the mount point itself is served by the model).
func SocketPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(os.TempDir(), "iosim-mount-"+hex.EncodeToString(sum[:8])+".sock"), nil
}

// ListenControl serves control commands on the unix socket at path: one
// command line per connection, answered with Command's output, or a line
// "error: ..." on failure. It returns the listener (close it to stop).
func ListenControl(s *Server, path string) (net.Listener, error) {
	os.Remove(path) // a killed run's
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			out, err := s.Command(strings.TrimSpace(line))
			if err != nil {
				out = "error: " + err.Error() + "\n"
			}
			io.WriteString(c, out)
			c.Close()
		}
	}()
	return l, nil
}

// Ctl sends one command to the mount at dir and returns its answer; an
// answer "error: ..." is an error.
func Ctl(dir, command string) (string, error) {
	path, err := SocketPath(dir)
	if err != nil {
		return "", err
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		return "", fmt.Errorf("%s: no iosim mount answers there (%v)", dir, err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, command+"\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	if err != nil {
		return "", err
	}
	if msg, ok := strings.CutPrefix(string(b), "error: "); ok {
		return "", fmt.Errorf("%s", strings.TrimSpace(msg))
	}
	return string(b), nil
}

// ServeFIFO reads commands from the named pipe at path (made if missing),
// one a line, as LazyFS's FIFO takes them, until stop is closed; answers
// and errors go to logf.
func ServeFIFO(s *Server, path string, logf func(format string, args ...any)) error {
	if fi, err := os.Stat(path); err != nil {
		if err := unix.Mkfifo(path, 0o600); err != nil {
			return fmt.Errorf("--fifo %s: %v", path, err)
		}
	} else if fi.Mode()&fs.ModeNamedPipe == 0 {
		return fmt.Errorf("--fifo %s: exists and is not a named pipe", path)
	}
	go func() {
		for {
			f, err := os.Open(path)
			if err != nil {
				logf("--fifo %s: %v", path, err)
				return
			}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				line := strings.TrimSpace(sc.Text())
				if line == "" {
					continue
				}
				out, err := s.Command(line)
				if err != nil {
					logf("--fifo: %s: %v", line, err)
					continue
				}
				logf("--fifo: %s: %s", line, strings.TrimSpace(out))
			}
			f.Close()
		}
	}()
	return nil
}
