package interposer_test

import (
	"bytes"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// Sync policies under power loss: a random workload of writes and syncs on one
// file, then vfs.Crash (strict model: only durable state survives). Whatever the
// policy, the file after the crash must hold exactly what was acknowledged by the
// last sync (fsync/fdatasync returning, or an O_SYNC/O_DSYNC write returning).

type syncOp struct {
	Kind string // pwrite, ftruncate, fsync
	Off  int64
	N    int
}

func (o syncOp) String() string {
	switch o.Kind {
	case "pwrite":
		return fmt.Sprintf("pwrite64(fd, %d bytes, %d)", o.N, o.Off)
	case "ftruncate":
		return fmt.Sprintf("ftruncate(fd, %d)", o.Off)
	}
	return "fsync(fd)"
}

type syncOutcome struct {
	acked       []byte // file content at the last acknowledgement
	crashed     []byte // file content after the crash
	liveMtime   int64
	crashMtime  int64
	crashExists bool
}

// runSyncWorkload creates /db/f (its name made durable), runs ops through stack
// with the file opened with flags, and crashes. With O_SYNC/O_DSYNC in flags every
// write is an acknowledgement; otherwise only fsync is.
func runSyncWorkload(t fataler, ops []syncOp, flags int, stack func(sim.Handler) sim.Handler) syncOutcome {
	fs := vfs.New()
	k := sim.New(fs)
	p := k.Spawn()
	must := func(err error) {
		if err != nil {
			t.Helper()
			t.Fatal(err)
		}
	}
	q := p
	if stack != nil {
		q = p.Through(stack(k))
	}
	must(p.Mkdir("/db", 0o755))
	fd, err := q.Open("/db/f", unix.O_CREAT|unix.O_RDWR|flags, 0o644) // through the policy
	must(err)
	for _, d := range []string{"/db", "/"} {
		dfd, err := p.Open(d, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		must(err)
		must(p.Fsync(dfd))
		must(p.Close(dfd))
	}
	must(p.Fsync(fd))
	content := func() []byte {
		var st unix.Stat_t
		must(p.Fstat(fd, &st))
		b := make([]byte, st.Size)
		if len(b) > 0 {
			_, err := p.Pread(fd, b, 0)
			must(err)
		}
		return b
	}
	var out syncOutcome
	out.acked = content()
	syncWrites := flags&(unix.O_SYNC|unix.O_DSYNC) != 0
	for i, o := range ops {
		switch o.Kind {
		case "pwrite":
			if _, err := q.Pwrite(fd, wdata(o.N, i), o.Off); err == nil && syncWrites {
				out.acked = content()
			}
		case "ftruncate":
			q.Ftruncate(fd, o.Off)
		case "fsync":
			if q.Fsync(fd) == nil {
				out.acked = content()
			}
		}
	}
	var st unix.Stat_t
	must(p.Fstat(fd, &st))
	out.liveMtime = st.Mtim.Nano()
	c := sim.New(fs.Crash()).Spawn()
	cfd, err := c.Open("/db/f", unix.O_RDONLY, 0)
	if err != nil {
		return out
	}
	out.crashExists = true
	must(c.Fstat(cfd, &st))
	out.crashMtime = st.Mtim.Nano()
	out.crashed = make([]byte, st.Size)
	if st.Size > 0 {
		_, err = c.Pread(cfd, out.crashed, 0)
		must(err)
	}
	return out
}

func genSyncOps(t *rapid.T, kinds ...string) []syncOp {
	g := rapid.Custom(func(t *rapid.T) syncOp {
		switch rapid.SampledFrom(kinds).Draw(t, "kind") {
		case "pwrite":
			return syncOp{Kind: "pwrite", Off: rapid.Int64Range(0, 20000).Draw(t, "off"), N: rapid.IntRange(1, 5000).Draw(t, "n")}
		case "ftruncate":
			return syncOp{Kind: "ftruncate", Off: rapid.Int64Range(0, 20000).Draw(t, "size")}
		}
		return syncOp{Kind: "fsync"}
	})
	return rapid.SliceOfN(g, 1, 30).Draw(t, "ops")
}

func checkDurable(t *rapid.T, what string, o syncOutcome) {
	if !o.crashExists {
		t.Fatalf("%s: /db/f is gone after the crash", what)
	}
	if !bytes.Equal(o.acked, o.crashed) {
		t.Fatalf("%s: after the crash the file has %d bytes, %d acknowledged (or content differs)", what, len(o.crashed), len(o.acked))
	}
}

func fdatasyncStack(k sim.Handler) sim.Handler { return interposer.NewFdatasync(k) }
func dsyncStack(k sim.Handler) sim.Handler     { return interposer.NewDsync(k) }

// TestFdatasyncKeepsAcknowledgedData: fsync→fdatasync keeps every acknowledged
// byte and the file size exactly as fsync does.
func TestFdatasyncKeepsAcknowledgedData(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ops := genSyncOps(t, "pwrite", "ftruncate", "fsync")
		plain := runSyncWorkload(t, ops, 0, nil)
		data := runSyncWorkload(t, ops, 0, fdatasyncStack)
		checkDurable(t, "fsync", plain)
		checkDurable(t, "fdatasync", data)
		if !bytes.Equal(plain.crashed, data.crashed) {
			t.Fatalf("crash states differ: fsync %d bytes, fdatasync %d bytes", len(plain.crashed), len(data.crashed))
		}
	})
}

// TestDsyncKeepsAcknowledgedData: O_SYNC→O_DSYNC keeps every acknowledged write.
func TestDsyncKeepsAcknowledgedData(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ops := genSyncOps(t, "pwrite")
		plain := runSyncWorkload(t, ops, unix.O_SYNC, nil)
		data := runSyncWorkload(t, ops, unix.O_SYNC, dsyncStack)
		checkDurable(t, "O_SYNC", plain)
		checkDurable(t, "O_DSYNC", data)
		if !bytes.Equal(plain.crashed, data.crashed) {
			t.Fatalf("crash states differ")
		}
	})
}

// TestSyncPoliciesLoseMtime shows what fdatasync and O_DSYNC do not keep: an
// overwrite in place (no size change) is durable, but its mtime is not — after the
// crash the file has the new bytes and the old mtime. fsync and O_SYNC keep both.
func TestSyncPoliciesLoseMtime(t *testing.T) {
	// Grow the file and sync, then overwrite in place and sync (or write O_SYNC).
	withFsync := []syncOp{{Kind: "pwrite", Off: 0, N: 8192}, {Kind: "fsync"}, {Kind: "pwrite", Off: 100, N: 10}, {Kind: "fsync"}}
	syncWrites := []syncOp{{Kind: "pwrite", Off: 0, N: 8192}, {Kind: "pwrite", Off: 100, N: 10}}
	for _, c := range []struct {
		name      string
		ops       []syncOp
		flags     int
		stack     func(sim.Handler) sim.Handler
		keepMtime bool
	}{
		{"fsync", withFsync, 0, nil, true},
		{"fdatasync", withFsync, 0, fdatasyncStack, false},
		{"O_SYNC", syncWrites, unix.O_SYNC, nil, true},
		{"O_SYNC→O_DSYNC", syncWrites, unix.O_SYNC, dsyncStack, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runSyncWorkload(t, c.ops, c.flags, c.stack)
			if !bytes.Equal(o.acked, o.crashed) {
				t.Fatalf("acknowledged bytes lost: %d vs %d", len(o.acked), len(o.crashed))
			}
			t.Logf("live mtime %d, after crash %d", o.liveMtime, o.crashMtime)
			if kept := o.crashMtime == o.liveMtime; kept != c.keepMtime {
				t.Fatalf("mtime kept = %v, want %v (live %d, crashed %d)", kept, c.keepMtime, o.liveMtime, o.crashMtime)
			}
			if !c.keepMtime && o.crashMtime > o.liveMtime {
				t.Fatalf("crashed mtime newer than live")
			}
		})
	}
}
