package sim

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// benchSetup makes a process with a 64 KiB file /f open O_RDWR.
func benchSetup(b *testing.B) (*Process, int) {
	k := New(vfs.New())
	p := k.Spawn()
	fd, _ := p.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
	p.Write(fd, make([]byte, 64<<10))
	return p, fd
}

func BenchmarkCallRead(b *testing.B) {
	p, fd := benchSetup(b)
	buf := make([]byte, 512)
	for b.Loop() {
		p.Seek(fd, 512, 0)
		p.Read(fd, buf)
	}
}

func BenchmarkCallSeek(b *testing.B) {
	p, fd := benchSetup(b)
	for b.Loop() {
		p.Seek(fd, 512, 0)
	}
}

func BenchmarkCallOpenClose(b *testing.B) {
	p, _ := benchSetup(b)
	for b.Loop() {
		fd, _ := p.Open("/f", unix.O_RDONLY, 0)
		p.Close(fd)
	}
}

func BenchmarkCallFcntl(b *testing.B) {
	p, fd := benchSetup(b)
	for b.Loop() {
		p.FcntlInt(uintptr(fd), unix.F_SETFD, 1)
	}
}

func BenchmarkVfsReadAt(b *testing.B) {
	fs := vfs.New()
	ino, _, _ := fs.Root().Open("f", unix.O_CREAT|unix.O_RDWR, 0o644)
	ino.WriteAt(make([]byte, 64<<10), 0)
	buf := make([]byte, 512)
	for b.Loop() {
		ino.ReadAt(buf, 512)
	}
}

func BenchmarkVfsOpen(b *testing.B) {
	fs := vfs.New()
	fs.Root().Open("f", unix.O_CREAT|unix.O_RDWR, 0o644)
	for b.Loop() {
		fs.Root().Open("/f", unix.O_RDONLY, 0)
	}
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

func BenchmarkCallGetpid(b *testing.B) {
	p, _ := benchSetup(b)
	for b.Loop() {
		p.Getpid()
	}
}
