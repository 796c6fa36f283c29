package replay

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLiveStrace records a shell session with the strace of this machine, in a
// fresh directory, and replays it with verification: the model must give every
// result Linux gave, here and now. Skipped where strace is not installed or
// cannot trace.
func TestLiveStrace(t *testing.T) {
	straceBin, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed")
	}
	script := `set -e
printf 'hello world\n' > a.txt
printf 'more\n' >> a.txt
cat a.txt > copy.txt
cat copy.txt /etc/hostname > both.txt
mkdir -p d/e
mv a.txt d/c.txt
ln -s d/c.txt l
ln d/c.txt hard
while read x; do echo "$x"; done < l
dd if=/dev/zero of=sparse bs=4096 count=2 seek=100 conv=notrunc,fsync status=none
truncate -s 1M sparse
ls -la . d >/dev/null
rm -r d/e
rm hard
chmod 600 sparse
test -e nothing || true
`
	type run struct {
		name  string
		flags []string
		cmd   []string
	}
	runs := []run{
		{"sh", []string{"-f"}, []string{"sh", "-c", script}},
		{"sh", []string{"-f", "-tt", "-T", "-y"}, []string{"sh", "-c", script}},
		{"sh", []string{"-f", "-s", "4", "-X", "verbose"}, []string{"sh", "-c", script}},
		{"sh", []string{"-f", "-e", "write=all", "-e", "read=all"}, []string{"sh", "-c", script}},
		{"sh", []string{"-f", "-n", "-i"}, []string{"sh", "-c", script}},
		{"sh", []string{"-f", "-k"}, []string{"sh", "-c", script}},
		// successful calls only: a call's second half may follow on a line
		// of its own, with no pid
		{"sh", []string{"-f", "-z"}, []string{"sh", "-c", script}},
		{"sh", []string{"-f", "--decode-pids=comm"}, []string{"sh", "-c", script}}, // PID<comm>
		// a file per task, without timestamps: ordered by the waits and clones
		{"sh", []string{"-ff"}, []string{"sh", "-c", script}},
		// -e trace= subsets: the calls they leave out (close, write, clone,
		// socket) made and freed fds and changed sizes unseen
		{"sh", []string{"-f", "-e", "trace=%file"}, []string{"sh", "-c", script}},
		{"sh", []string{"-f", "-e", "trace=%file,%desc"}, []string{"sh", "-c", script}},
		{"sh", []string{"-f", "-e", "trace=%desc"}, []string{"sh", "-c", script}},
		{"sh", []string{"-f", "-e", "trace=openat,close,read,write,lseek"}, []string{"sh", "-c", script}},
	}
	tools := `dd if=/dev/zero of=d bs=4096 count=10 oflag=direct status=none
dd if=d of=e bs=512 skip=3 count=5 iflag=direct status=none
cp --sparse=always d f; truncate -s 100M f; cp --sparse=always f g
sort /etc/passwd > s; mkdir -p a/b; touch a/b/c
tar cf t.tar a; tar xf t.tar -C a/b; find . -type f > /dev/null
cp -a a acopy; cp -p s scopy; cat s s > ss; cmp ss ss; cat ss s > sss; rm -r acopy
ln -sf s link; readlink link > /dev/null; readlink -f /bin/sh > /dev/null; rm -rf a`
	runs = append(runs,
		run{"tools", []string{"-f"}, []string{"sh", "-c", tools}},
		run{"tools", []string{"-f", "-s", "0"}, []string{"sh", "-c", tools}}) // no string shown
	if _, err := exec.LookPath("python3"); err == nil {
		threads := `import tempfile, os, threading
def w(i):
    with open(f"t{i}", "wb") as f:
        f.write(os.urandom(1000)); f.flush(); os.fsync(f.fileno())
ts = [threading.Thread(target=w, args=(i,)) for i in range(3)]
[t.start() for t in ts]; [t.join() for t in ts]
with tempfile.NamedTemporaryFile(dir=".") as t:
    t.write(b"x" * 5000); t.flush()
os.rename("t0", "t9")
fd = os.open("big", os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b"abc", 1 << 30)
print(os.lseek(fd, 0, os.SEEK_DATA), os.lseek(fd, 0, os.SEEK_HOLE))
os.close(fd)`
		runs = append(runs,
			run{"python-threads", []string{"-f"}, []string{"python3", "-c", threads}},
			run{"python-threads", []string{"-ff"}, []string{"python3", "-c", threads}})
		// preadv2/pwritev2 with RWF_* flags, and the errors of bad ones.
		runs = append(runs, run{"python-rwf", []string{"-f", "-s", "64"}, []string{"python3", "-c", `import os
fd = os.open("data", os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
os.pwritev(fd, [b"hello ", b"world"], 0)
os.pwritev(fd, [b"AB"], 0, os.RWF_DSYNC)
os.pwritev(fd, [b"tail"], 0, os.RWF_APPEND)
os.lseek(fd, 3, 0)
b1, b2 = bytearray(4), bytearray(3)
os.preadv(fd, [b1, b2], -1, os.RWF_HIPRI)
os.preadv(fd, [b1], 2, os.RWF_NOWAIT)
for f in (1 << 30, os.RWF_APPEND | 0x20):
    try:
        os.pwritev(fd, [b"x"], 0, f)
    except OSError:
        pass
os.pwritev(fd, [b"cur"], -1, os.RWF_DSYNC)
os.close(fd)`}})
	}
	if _, err := exec.LookPath("gcc"); err == nil {
		runs = append(runs, run{"gcc", []string{"-f"}, []string{"sh", "-c",
			`printf 'int main(void){return 0;}\n' > m.c && gcc -O2 -o m m.c && ./m`}})
	}
	if _, err := exec.LookPath("sqlite3"); err == nil {
		runs = append(runs, run{"sqlite3-wal", []string{"-f", "-tt", "-T", "-yy"}, []string{"sqlite3", "t.db",
			"PRAGMA journal_mode=WAL; CREATE TABLE t(a); INSERT INTO t VALUES(1),(2); SELECT * FROM t; PRAGMA wal_checkpoint(TRUNCATE);"}})
	}
	if _, err := exec.LookPath("git"); err == nil {
		runs = append(runs, run{"git", []string{"-f"}, []string{"sh", "-c",
			"git init -q r && cd r && echo hi > f && git add f && git -c user.name=a -c user.email=b commit -qm m && git status --short && cd .. && git clone -q r r2"}})
	}
	for _, rn := range runs {
		t.Run(rn.name+filepath.Join(rn.flags...), func(t *testing.T) {
			if _, err := exec.LookPath(rn.cmd[0]); err != nil {
				t.Skipf("%s is not installed", rn.cmd[0])
			}
			dir := t.TempDir()
			work := filepath.Join(dir, "work")
			require.NoError(t, os.Mkdir(work, 0o755))
			trace := filepath.Join(dir, "trace.strace")
			args := append(append(append([]string{}, rn.flags...), "-o", trace, "--"), rn.cmd...)
			cmd := exec.Command(straceBin, args...)
			cmd.Dir = work
			cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "HOME=" + dir}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Skipf("strace cannot trace here: %v: %s", err, out)
			}
			files := []string{trace}
			if slices.Contains(rn.flags, "-ff") { // one file per task: trace.PID
				files, err = filepath.Glob(trace + ".*")
				require.NoError(t, err)
				require.NotEmpty(t, files)
			}
			rep, err := Run(files, Options{Verify: true, Cwd: work})
			require.NoError(t, err)
			require.Zero(t, rep.ParseErrors)
			for _, d := range rep.DivergenceList {
				t.Error(d)
			}
			if len(rep.DivergenceList) > 0 {
				// the recording is the evidence: keep it past the test's
				// temporary directory
				for _, f := range files {
					kept := filepath.Join(os.TempDir(), "iosim-live-"+strings.ReplaceAll(rn.name+filepath.Join(rn.flags...), "/", "_")+"-"+filepath.Base(f))
					if b, err := os.ReadFile(f); err == nil && os.WriteFile(kept, b, 0o644) == nil {
						t.Logf("recording kept in %s", kept)
					}
				}
			}
			for k := range rep.Skipped {
				if strings.HasPrefix(k, "preadv2 ") || strings.HasPrefix(k, "pwritev2 ") {
					t.Errorf("skipped: %s", k)
				}
			}
			require.Greater(t, rep.Verified, int64(100))
		})
	}
}

// TestLiveStraceAttach attaches strace -f -p to a running multithreaded
// Python program, as one attaches to a database server, and replays the trace
// with verification. No task's creation is in such a trace: the threads must
// share one fd table (one opens a file, another writes and reads it through
// the same fd), and the fds opened before the attach are unknown.
func TestLiveStraceAttach(t *testing.T) {
	straceBin, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	script := `import os, threading, time
held = os.open("before", os.O_CREAT | os.O_RDWR, 0o644)  # open before the attach
box, opened = {}, threading.Event()
def work(i):
    while not os.path.exists("go"):
        time.sleep(0.005)
    if i == 0:
        box["fd"] = os.open("handoff", os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
        opened.set()
    for k in range(3):
        fd = os.open("f%d" % i, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
        os.write(fd, b"x" * (100 + i))
        time.sleep(0.002 * (i + 1))
        os.close(fd)
ts = [threading.Thread(target=work, args=(i,)) for i in range(3)]
for t in ts:
    t.start()
print("ready", flush=True)
opened.wait()
os.pwrite(box["fd"], b"handed over", 0)
assert os.pread(box["fd"], 64, 0) == b"handed over"
os.pwrite(held, b"after", 0)
for t in ts:
    t.join()
os.close(box["fd"])
`
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	require.NoError(t, os.Mkdir(work, 0o755))
	trace := filepath.Join(dir, "attach.strace")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	py := exec.CommandContext(ctx, "python3", "-c", script)
	py.Dir = work
	out, err := py.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, py.Start())
	goFile := filepath.Join(work, "go")
	defer func() {
		_ = os.WriteFile(goFile, nil, 0o644) // never leave it waiting
		_ = py.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)

	st := exec.CommandContext(ctx, straceBin, "-f", "-p", strconv.Itoa(py.Process.Pid), "-o", trace)
	stderr, err := st.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, st.Start())
	msg, _ := bufio.NewReader(stderr).ReadString('\n') // "strace: Process N attached with 4 threads"
	if !strings.Contains(msg, "attached") {
		_ = st.Wait()
		t.Skipf("strace cannot attach here: %s", msg)
	}
	require.NoError(t, os.WriteFile(goFile, nil, 0o644))
	require.NoError(t, py.Wait())
	require.NoError(t, st.Wait())

	rep, err := Run([]string{trace}, Options{Verify: true, Cwd: work})
	require.NoError(t, err)
	require.Zero(t, rep.ParseErrors)
	for _, d := range rep.DivergenceList {
		t.Error(d)
	}
	require.Greater(t, rep.Verified, int64(20))
}

// TestLiveStraceStdin traces a program whose stdin is a pipe from before the
// trace (its launcher's): what its reads, fstat and lseek of fd 0 return is
// the recording's, not the model's to check.
func TestLiveStraceStdin(t *testing.T) {
	straceBin, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed")
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "stdin.strace")
	cmd := exec.Command(straceBin, "-f", "-o", trace, "--", "sh", "-c", "cat > in.txt; wc -c < in.txt > n; head -c 3 in.txt")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	cmd.Stdin = strings.NewReader(strings.Repeat("piped input\n", 500))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here: %v: %s", err, out)
	}
	rep, err := Run([]string{trace}, Options{Verify: true, Cwd: dir})
	require.NoError(t, err)
	for _, d := range rep.DivergenceList {
		t.Error(d)
	}
	require.Greater(t, rep.Verified, int64(50))
}
