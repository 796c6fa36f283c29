package interposer_test

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// A stack as the CLI builds it from --stack flags: the trace nearest the program,
// then the cache, then a count of what still reaches the kernel.
func ExampleParseStack() {
	k := sim.New(vfs.New())
	p := k.Spawn()
	fd, _ := p.Open("/oraus.msb", unix.O_CREAT|unix.O_WRONLY, 0o644)
	p.Write(fd, make([]byte, 40960))
	p.Close(fd)

	st, err := interposer.ParseStack([]string{"trace:out=stdout", "filecache:path=/oraus.msb", "count"})
	if err != nil {
		fmt.Println(err)
		return
	}
	h, _ := st.Build(k)
	q := p.Through(h)
	buf := make([]byte, 512)
	for range 2 {
		fd, _ := q.Open("/oraus.msb", unix.O_RDONLY, 0)
		q.Seek(fd, 39936, unix.SEEK_SET)
		q.Read(fd, buf)
		q.Close(fd)
	}
	cnt, _ := interposer.Find[*interposer.Count](h)
	fmt.Println("calls that reached the kernel:", cnt.Total())
	fc, _ := interposer.Find[*interposer.FileCache](h)
	fmt.Printf("%+v\n", fc.Stats())
	// Output:
	// openat(AT_FDCWD, "/oraus.msb", O_RDONLY|O_LARGEFILE) = 0
	// lseek(0, 39936, SEEK_SET) = 39936
	// read(0, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"..., 512) = 512
	// close(0) = 0
	// openat(AT_FDCWD, "/oraus.msb", O_RDONLY|O_LARGEFILE) = 0
	// lseek(0, 39936, SEEK_SET) = 39936
	// read(0, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"..., 512) = 512
	// close(0) = 0
	// calls that reached the kernel: 12
	// {Served:7 Passed:1 Extra:11}
}
