package interposer_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// The test world: a small tree with the message file of seed 000.
const (
	msbPath   = "/ora/mesg/oraus.msb"
	otherPath = "/ora/mesg/other.msb"
	msbSize   = 40960 + 300 // past the 39936+512 the loop reads
)

// content returns deterministic file bytes.
func content(seed byte, n int) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// fataler is the part of testing.TB and *rapid.T that newWorld needs.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

// newWorld builds a fresh file system and kernel (with opts) holding the files,
// and returns the kernel and a process bound straight to it.
func newWorld(t fataler, opts ...sim.Option) (*vfs.FS, *sim.Kernel, *sim.Process) {
	fs := vfs.New()
	k := sim.New(fs, opts...)
	p := k.Spawn()
	must := func(err error) {
		if err != nil {
			t.Helper()
			t.Fatal(err)
		}
	}
	// stdin, stdout and stderr, as a real process has them: the program's files
	// start at fd 3.
	for fd := range 3 {
		must(p.Task().InstallSpecial(fd, sim.DevNull{}, unix.O_RDWR))
	}
	must(p.Mkdir("/ora", 0o755))
	must(p.Mkdir("/ora/mesg", 0o755))
	for i, f := range []string{msbPath, otherPath} {
		fd, err := p.Open(f, unix.O_CREAT|unix.O_WRONLY, 0o644)
		must(err)
		_, err = p.Write(fd, content(byte(i+1), msbSize-i*1000))
		must(err)
		must(p.Close(fd))
	}
	must(p.Symlink(msbPath, "/msb.link"))
	return fs, k, p
}

// seedLoop runs one iteration of seed 000's test program.
func seedLoop(t testing.TB, p *sim.Process, buf []byte) {
	fd, err := p.Open(msbPath, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.FcntlInt(uintptr(fd), unix.F_SETFD, 1)
	for _, r := range [][2]int{{0, 256}, {512, 512}, {1024, 512}, {39936, 512}} {
		p.Seek(fd, int64(r[0]), unix.SEEK_SET)
		if n, err := p.Read(fd, buf[:r[1]]); n != r[1] || err != nil {
			t.Fatalf("read at %d: %d, %v", r[0], n, err)
		}
	}
	p.Close(fd)
}

func TestFileCacheSeedLoopSmoke(t *testing.T) {
	_, k, p := newWorld(t)
	cnt := interposer.NewCount(k)
	fc := interposer.NewFileCache(cnt, msbPath)
	q := p.Through(fc)
	buf := make([]byte, 1024)
	for range 1000 {
		seedLoop(t, q, buf)
	}
	t.Logf("kernel calls: %d, %+v\n%s", cnt.Total(), fc.Stats(), cnt)
	if cnt.Total() > 20 {
		t.Errorf("%d kernel calls for 1000 iterations", cnt.Total())
	}
}
