package vfs_test

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// A crash explorer takes a snapshot at a crash point, then steps one state
// through the choices, checking each distinct state once and reading only
// what a step touched.
func ExampleCrashSnapshot() {
	fs := vfs.New()
	r := fs.Root()
	f, _, _ := r.Open("data", unix.O_CREAT|unix.O_RDWR, 0o644)
	_, _ = f.WriteAt([]byte("old"), 0)
	_ = fs.Sync()
	_, _ = f.WriteAt([]byte("new"), 0)           // not synced
	_, _, _ = r.Open("log", unix.O_CREAT, 0o644) // nor is its name

	snap := fs.Snapshot() // the file system may go on from here
	ps := snap.Pending()
	st := snap.State() // nothing pending survived
	seen := map[uint64]bool{st.Hash(): true}
	for k, p := range ps { // ordered prefixes: keep one more change each step
		st.Apply(p)
		if seen[st.Hash()] {
			fmt.Printf("%-28s same state as before\n", p)
			continue
		}
		seen[st.Hash()] = true
		b, _ := st.ReadFile("/data")
		_, err := st.Stat("/log")
		fmt.Printf("%-28s data=%q log:%v touched=%v\n", p, b, err == nil, st.Touched(k))
	}
	// Output:
	// #6 attr /data                data="old" log:false touched=[3]
	// #7 write /data [0,+4096)     data="new" log:false touched=[3]
	// #8 attr /                    data="new" log:false touched=[2]
	// #9 create /log               data="new" log:true touched=[2 4]
}
