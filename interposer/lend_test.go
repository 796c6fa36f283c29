package interposer_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
)

// TestRewritingLayersRestoreCall: the layers that change a Call before passing it
// on (fsync into fdatasync, O_SYNC into O_DSYNC, fsio's open flags, a short
// write) give it back as they got it, as sim.Handler requires: a layer above
// (the tracer, say) sees after the call the Call it sent.
func TestRewritingLayersRestoreCall(t *testing.T) {
	short, err := interposer.ParseRule("write=short:2")
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		layer func(sim.Handler) sim.Handler
		call  func(q *sim.Process) error
	}{
		{"fdatasync", func(h sim.Handler) sim.Handler { return interposer.NewFdatasync(h) }, func(q *sim.Process) error {
			fd, err := q.Open("/ora/f", unix.O_CREAT|unix.O_RDWR, 0o644)
			if err != nil {
				return err
			}
			return q.Fsync(fd)
		}},
		{"dsync", func(h sim.Handler) sim.Handler { return interposer.NewDsync(h) }, func(q *sim.Process) error {
			_, err := q.Open("/ora/f", unix.O_CREAT|unix.O_RDWR|unix.O_SYNC, 0o644)
			return err
		}},
		{"fsio", func(h sim.Handler) sim.Handler { return interposer.NewFsio(h, interposer.FsioNone, "") }, func(q *sim.Process) error {
			_, err := q.Open("/ora/f", unix.O_CREAT|unix.O_RDWR, 0o644)
			return err
		}},
		{"fault short", func(h sim.Handler) sim.Handler { return interposer.NewFault(h, 1, short) }, func(q *sim.Process) error {
			fd, err := q.Open("/ora/f", unix.O_CREAT|unix.O_RDWR, 0o644)
			if err != nil {
				return err
			}
			n, err := q.Write(fd, []byte("abcdef"))
			if n != 2 {
				t.Errorf("short write: %d bytes, want 2", n)
			}
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, k, p := newWorld(t)
			layer := c.layer(interposer.NewCount(k))
			var changed []sim.Sysno
			q := p.Through(sim.HandlerFunc(func(cl *sim.Call) sim.Result {
				sent := *cl
				r := layer.Syscall(cl)
				if !equalCalls(sent, *cl) {
					changed = append(changed, sent.Nr)
				}
				return r
			}))
			require.NoError(t, c.call(q))
			require.Empty(t, changed, "calls the layer gave back changed")
		})
	}
}

// equalCalls compares two Calls field by field (slices by their first element
// and length: a layer that shortens a buffer changes its length).
func equalCalls(a, b sim.Call) bool {
	return a.Nr == b.Nr && a.Task == b.Task && a.Args == b.Args && a.Path == b.Path && a.Path2 == b.Path2 &&
		len(a.Buf) == len(b.Buf) && len(a.Iov) == len(b.Iov) && a.Obj == b.Obj
}
