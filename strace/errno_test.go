package strace_test

import (
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/strace"
)

// TestErrnoNamesAsStracePrints: strace prints errno 95 as EOPNOTSUPP (x/sys/unix
// calls it ENOTSUP, which strace never prints); both names parse to 95, and the
// formatter writes what strace writes.
func TestErrnoNamesAsStracePrints(t *testing.T) {
	for _, c := range []struct {
		line string
		want syscall.Errno
		name string
	}{
		{`preadv2(3, [{iov_base=0x7f646aba4160, iov_len=4}], 1, 0, 0x40000000 /* RWF_??? */) = -1 EOPNOTSUPP (Operation not supported)`, 95, "EOPNOTSUPP"},
		{`fsync(3) = -1 ENOTSUP (Operation not supported)`, 95, "ENOTSUP"},
		{`read(3, 0x7ffd, 10) = -1 EAGAIN (Resource temporarily unavailable)`, syscall.EAGAIN, "EAGAIN"},
		{`fcntl(3, F_SETLKW, {l_type=F_WRLCK, l_whence=SEEK_SET, l_start=0, l_len=0}) = -1 EDEADLK (Resource deadlock avoided)`, syscall.EDEADLK, "EDEADLK"},
	} {
		p := strace.NewParser(strings.NewReader(c.line+"\n"), "t", strace.Options{})
		ev, err := p.Next()
		require.NoError(t, err, c.line)
		require.Equal(t, c.want, ev.Errno, c.line)
		require.Equal(t, c.name, ev.ErrnoName, c.line)
	}
	require.Equal(t, "EOPNOTSUPP", strace.ErrnoName(syscall.EOPNOTSUPP))
	p := strace.NewParser(strings.NewReader("fsync(3) = -1 EOPNOTSUPP (Operation not supported)\n"), "t", strace.Options{})
	ev, err := p.Next()
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(strace.AppendFormat(nil, ev)), " = -1 EOPNOTSUPP (Operation not supported)\n"))
}
