package sim_test

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// Code written against golang.org/x/sys/unix runs on the model by changing its
// receiver; a power cut shows what was durable.
func Example() {
	fs := vfs.New()
	p := sim.New(fs).Spawn()
	fd, _ := p.Open("/log", unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND, 0o644)
	p.Write(fd, []byte("record 1\n"))
	p.Fdatasync(fd)
	p.Write(fd, []byte("record 2\n")) // acknowledged, never synced

	_, err := fs.Crash().Stat("/log")
	fmt.Println("without a directory fsync:", err)

	dir, _ := p.Open("/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	p.Fsync(dir)
	after := fs.Crash()
	f, _ := after.Open("/log")
	buf := make([]byte, 64)
	n, _ := f.Read(buf)
	fmt.Printf("after fsync of the directory: %q\n", buf[:n])
	// Output:
	// without a directory fsync: stat /log: no such file or directory
	// after fsync of the directory: "record 1\n"
}
