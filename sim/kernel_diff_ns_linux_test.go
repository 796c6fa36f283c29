//go:build linux

package sim_test

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"
)

// The namespace and fd actions of TestKernelDiff beyond the basic ones: the *at
// calls of sysNS (link, symlink, readlink, renameat2, unlinkat, mkdirat, fstatat,
// faccessat, fchmod) and the fd calls of sysFD (getdents64, flock,
// copy_file_range, sendfile). They draw their paths from the same pool as the
// basic actions (diffPaths, diffDirs, diffRelPath), so that the sequences
// interact: links to renamed files, symlinks to removed targets, exchanges of a
// file and a directory, and so on. Each is one key of the Repeat map. rapid
// draws a key by its index in sorted order with a bias towards the first and the
// last few, so the new names sort after "creat" and before "writev" (hence
// "ioCopyFileRange", "ioSendfile"): the basic actions keep their places at the
// ends and so their relative weights.

var (
	// diffTargets are the symlink targets: relative only (an absolute target
	// would resolve against the real root on the kernel side) and without ".."
	// (from a link in "/" it would leave the run's directory on the kernel).
	diffTargets = []string{"f0", "f1", "d", "f3", "d/f3", "e", "l", "nx/f", "f0/", "d/", ".", "x", ""}
	// diffNewPaths are the destinations of link, rename and symlink: the pool and
	// the two names the invariant also checks.
	diffNewPaths = append(append([]string{}, diffPaths...), "/e", "/d/e/g")
)

// ns and fdx are the two sides' extra call surfaces.
func (s *kdiff) ns() (m, k sysNS)  { return s.m.(sysNS), s.k.(sysNS) }
func (s *kdiff) fdx() (m, k sysFD) { return s.m.(sysFD), s.k.(sysFD) }

// drawAt draws a (dirfd, path) pair: mostly AT_FDCWD with a path of pool, else a
// dirfd (drawDirFd: often a directory, else any open fd or a bad one) with a
// relative path of diffRelPath.
func (s *kdiff) drawAt(t *rapid.T, label string, pool []string) (int, string) {
	if rapid.IntRange(0, 3).Draw(t, label+"Rel") > 0 {
		return unix.AT_FDCWD, rapid.SampledFrom(pool).Draw(t, label)
	}
	return s.drawDirFd(t, label+"Dirfd"), rapid.SampledFrom(diffRelPath).Draw(t, label)
}

// drawFdOf draws an fd for an action that wants one of a kind: a third of the
// time it first opens a path of paths with flags on both sides (the fd stays open
// for the later actions), else it draws any fd as drawFd does. The basic actions
// rarely leave a directory fd, or a file fd both readable and writable, open.
func (s *kdiff) drawFdOf(t *rapid.T, label string, paths []string, flags int) int {
	if rapid.IntRange(0, 2).Draw(t, label+"Fresh") > 0 {
		return s.drawFd(label)
	}
	path := rapid.SampledFrom(paths).Draw(t, label+"Path")
	mfd, merr := s.m.Open(path, flags, 0o644)
	kfd, kerr := s.k.Open(path, flags, 0o644)
	if s.same(fmt.Sprintf("open(%q, %#o)", path, flags), int64(mfd), int64(kfd), merr, kerr) {
		s.opened(kfd)
		return kfd
	}
	return kfd // -1: an EBADF for the action
}

// The paths drawDirFd and drawFileFd open: "/" is the run's directory on the
// kernel side, "/l" a symlink to a file (O_DIRECTORY: ENOTDIR) or whatever it
// names by then.
var (
	fdDirPaths  = []string{"/d", "/d/e", "/e", "/", "/l", "/d/"}
	fdFilePaths = []string{"/f0", "/f1", "/f2", "/d/f3", "/l"}
)

// drawDirFd draws a dirfd, opened O_RDONLY|O_DIRECTORY a third of the time.
func (s *kdiff) drawDirFd(t *rapid.T, label string) int {
	return s.drawFdOf(t, label, fdDirPaths, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
}

// drawFileFd draws an fd for the data calls, opened O_RDWR|O_CREAT a third of the
// time.
func (s *kdiff) drawFileFd(t *rapid.T, label string) int {
	return s.drawFdOf(t, label, fdFilePaths, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC)
}

// sameStatAt compares the st_mode, st_nlink and st_size (and the other fields
// sameStat compares) of a path on both sides after a call, without following a
// final symlink.
func (s *kdiff) sameStatAt(call, path string) {
	s.t.Helper()
	mns, kns := s.ns()
	var ms, ks unix.Stat_t
	c := fmt.Sprintf("lstat(%q) [after %s]", path, call)
	if s.sameErr(c, mns.Fstatat(unix.AT_FDCWD, path, &ms, unix.AT_SYMLINK_NOFOLLOW),
		kns.Fstatat(unix.AT_FDCWD, path, &ks, unix.AT_SYMLINK_NOFOLLOW)) {
		s.sameStat(c, &ms, &ks, false)
	}
}

// sameOffset compares the file offsets of fd on both sides.
func (s *kdiff) sameOffset(call string, fd int) {
	s.t.Helper()
	mo, merr := s.m.Seek(fd, 0, unix.SEEK_CUR)
	ko, kerr := s.k.Seek(fd, 0, unix.SEEK_CUR)
	s.same(fmt.Sprintf("lseek(%d, 0, SEEK_CUR) [after %s]", fd, call), mo, ko, merr, kerr)
}

// sameRange compares the bytes of [off, off+n) of fd on both sides, read with
// pread, unless fd cannot be read that way without a known divergence
// (O_DIRECT) or at all (O_WRONLY: both sides must then say EBADF).
func (s *kdiff) sameRange(call string, fd int, off int64, n int) {
	s.t.Helper()
	if n <= 0 {
		return
	}
	if fl, err := s.k.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err != nil || fl&unix.O_DIRECT != 0 {
		return
	}
	mb, kb := make([]byte, n), make([]byte, n)
	mr, merr := s.m.Pread(fd, mb, off)
	kr, kerr := s.k.Pread(fd, kb, off)
	c := fmt.Sprintf("pread(%d, %d, %d) [after %s]", fd, n, off, call)
	s.same(c, int64(mr), int64(kr), merr, kerr)
	s.sameBytes(c, mb, kb, kr)
}

// isDirect reports whether fd is open with O_DIRECT. copy_file_range and sendfile
// are not run on such fds: their reads and writes go through iomap's O_DIRECT
// path, whose alignment check runs one mapped extent at a time (known bugs
// dioReadAlign, dioWriteAlign, dioFailedPartial, ...), which the read and write
// actions already cover and mask.
func (s *kdiff) isDirect(fd int) bool {
	fl, err := s.k.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_DIRECT != 0
}

// drawIOOff draws the offset argument of copy_file_range or sendfile: nil (the
// file's offset) half of the time, else an explicit one.
func drawIOOff(t *rapid.T, label string) *int64 {
	if rapid.Bool().Draw(t, label+"Nil") {
		return nil
	}
	off := drawOff(t, label)
	return &off
}

func offStr(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprintf("[%d]", *p)
}

func cloneOff(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// direntNames parses a getdents64 buffer.
func direntNames(b []byte) []string {
	var names []string
	for len(b) >= 19 {
		reclen := int(b[16]) | int(b[17])<<8
		if reclen < 19 || reclen > len(b) {
			break
		}
		name := b[19:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		names = append(names, string(name))
		b = b[reclen:]
	}
	return names
}

func (s *kdiff) nsActions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		// link, linkat with AT_SYMLINK_FOLLOW, linkat relative to a dirfd, and
		// linkat(fd, "", AT_EMPTY_PATH) of an open fd (the caller is root, so
		// CAP_DAC_READ_SEARCH allows it).
		"link": func(t *rapid.T) {
			mns, kns := s.ns()
			od, op := s.drawAt(t, "from", diffPaths)
			flags := rapid.SampledFrom([]int{0, 0, unix.AT_SYMLINK_FOLLOW, unix.AT_EMPTY_PATH}).Draw(t, "flags")
			if flags == unix.AT_EMPTY_PATH {
				od, op = s.drawFileFd(t, "fromFd"), ""
			}
			nd, np := s.drawAt(t, "to", diffNewPaths)
			call := fmt.Sprintf("linkat(%d, %q, %d, %q, %#x)", od, op, nd, np, flags)
			if s.sameErr(call, mns.Linkat(od, op, nd, np, flags), kns.Linkat(od, op, nd, np, flags)) && nd == unix.AT_FDCWD {
				s.sameStatAt(call, np)
			}
		},
		"symlink": func(t *rapid.T) {
			mns, kns := s.ns()
			target := rapid.SampledFrom(diffTargets).Draw(t, "target")
			d, p := s.drawAt(t, "path", diffNewPaths)
			s.sameErr(fmt.Sprintf("symlinkat(%q, %d, %q)", target, d, p),
				mns.Symlinkat(target, d, p), kns.Symlinkat(target, d, p))
		},
		"readlink": func(t *rapid.T) {
			mns, kns := s.ns()
			d, p := s.drawAt(t, "path", append(diffNewPaths, "/l", "/l", "/l", "/l"))
			if rapid.IntRange(0, 5).Draw(t, "empty") == 0 {
				d, p = s.drawFd("fd"), ""
			}
			n := rapid.SampledFrom([]int{0, 1, 2, 4, 64}).Draw(t, "n")
			mb, kb := make([]byte, n), make([]byte, n)
			mr, merr := mns.Readlinkat(d, p, mb)
			kr, kerr := kns.Readlinkat(d, p, kb)
			call := fmt.Sprintf("readlinkat(%d, %q, %d)", d, p, n)
			s.same(call, int64(mr), int64(kr), merr, kerr)
			s.sameBytes(call, mb, kb, kr)
		},
		"renameat2": func(t *rapid.T) {
			mns, kns := s.ns()
			// Biased towards names that exist at the start, for RENAME_EXCHANGE.
			od, op := s.drawAt(t, "from", append(diffPaths, "/f0", "/d", "/l"))
			nd, np := s.drawAt(t, "to", append(diffNewPaths, "/f0", "/d", "/l", "/d/e"))
			flags := rapid.SampledFrom([]uint{0, unix.RENAME_NOREPLACE, unix.RENAME_EXCHANGE,
				unix.RENAME_EXCHANGE, unix.RENAME_NOREPLACE | unix.RENAME_EXCHANGE}).Draw(t, "flags")
			s.sameErr(fmt.Sprintf("renameat2(%d, %q, %d, %q, %#x)", od, op, nd, np, flags),
				mns.Renameat2(od, op, nd, np, flags), kns.Renameat2(od, op, nd, np, flags))
		},
		"unlinkat": func(t *rapid.T) {
			mns, kns := s.ns()
			flags := rapid.SampledFrom([]int{0, unix.AT_REMOVEDIR}).Draw(t, "flags")
			pool := diffPaths
			if flags == unix.AT_REMOVEDIR {
				// Not "/": the kernel side names the run's directory as ".", which
				// rmdir refuses with EINVAL where "/" is EBUSY.
				pool = append(append([]string{}, diffDirs...), "/f0", "/l", "/d/f3")
			}
			d, p := s.drawAt(t, "path", pool)
			s.sameErr(fmt.Sprintf("unlinkat(%d, %q, %#x)", d, p, flags),
				mns.Unlinkat(d, p, flags), kns.Unlinkat(d, p, flags))
		},
		"mkdirat": func(t *rapid.T) {
			mns, kns := s.ns()
			d := s.drawDirFd(t, "dirfd")
			if rapid.IntRange(0, 3).Draw(t, "cwd") == 0 {
				d = unix.AT_FDCWD
			}
			p := rapid.SampledFrom(append(diffRelPath, "g", "e/", "f0/x")).Draw(t, "path")
			mode := rapid.SampledFrom([]uint32{0o755, 0o700, 0o1777, 0o7777}).Draw(t, "mode")
			call := fmt.Sprintf("mkdirat(%d, %q, %#o)", d, p, mode)
			if s.sameErr(call, mns.Mkdirat(d, p, mode), kns.Mkdirat(d, p, mode)) {
				var ms, ks unix.Stat_t
				if s.sameErr(call+" fstatat", mns.Fstatat(d, p, &ms, 0), kns.Fstatat(d, p, &ks, 0)) {
					s.sameStat(call, &ms, &ks, false)
				}
			}
		},
		// lstat and fstatat, with and without AT_SYMLINK_NOFOLLOW, and with
		// AT_EMPTY_PATH on an open fd.
		"fstatat": func(t *rapid.T) {
			mns, kns := s.ns()
			d, p := s.drawAt(t, "path", diffNewPaths)
			flags := rapid.SampledFrom([]int{0, unix.AT_SYMLINK_NOFOLLOW, unix.AT_SYMLINK_NOFOLLOW, unix.AT_EMPTY_PATH, -1}).Draw(t, "flags")
			var ms, ks unix.Stat_t
			var merr, kerr error
			var call string
			switch flags {
			case -1:
				call = fmt.Sprintf("lstat(%q)", p)
				if d != unix.AT_FDCWD {
					p = "/" + p
				}
				merr, kerr = s.m.Lstat(p, &ms), s.k.Lstat(p, &ks)
			case unix.AT_EMPTY_PATH:
				d, p = s.drawFd("fd"), ""
				call = fmt.Sprintf("fstatat(%d, \"\", AT_EMPTY_PATH)", d)
				merr, kerr = mns.Fstatat(d, p, &ms, flags), kns.Fstatat(d, p, &ks, flags)
			default:
				call = fmt.Sprintf("fstatat(%d, %q, %#x)", d, p, flags)
				merr, kerr = mns.Fstatat(d, p, &ms, flags), kns.Fstatat(d, p, &ks, flags)
			}
			if s.sameErr(call, merr, kerr) {
				s.sameStat(call, &ms, &ks, false)
			}
		},
		"faccessat": func(t *rapid.T) {
			mns, kns := s.ns()
			d, p := s.drawAt(t, "path", diffNewPaths)
			flags := rapid.SampledFrom([]int{0, 0, unix.AT_SYMLINK_NOFOLLOW, unix.AT_EACCESS}).Draw(t, "flags")
			s.sameErr(fmt.Sprintf("faccessat(%d, %q, F_OK, %#x)", d, p, flags),
				mns.Faccessat(d, p, unix.F_OK, flags), kns.Faccessat(d, p, unix.F_OK, flags))
		},
		// fchmod and fchmodat; st_mode is compared afterwards.
		"fchmod": func(t *rapid.T) {
			mns, kns := s.ns()
			mode := rapid.SampledFrom([]uint32{0o644, 0o600, 0, 0o755, 0o7777, 0o4755, 0o1777, 0o170644}).Draw(t, "mode")
			if rapid.Bool().Draw(t, "byFd") {
				fd := s.drawFd("fd")
				call := fmt.Sprintf("fchmod(%d, %#o)", fd, mode)
				if s.sameErr(call, mns.Fchmod(fd, mode), kns.Fchmod(fd, mode)) {
					var ms, ks unix.Stat_t
					if s.sameErr(call+" fstat", s.m.Fstat(fd, &ms), s.k.Fstat(fd, &ks)) {
						s.sameStat(call, &ms, &ks, false)
					}
				}
				return
			}
			d, p := s.drawAt(t, "path", diffNewPaths)
			flags := rapid.SampledFrom([]int{0, 0, unix.AT_SYMLINK_NOFOLLOW}).Draw(t, "flags")
			call := fmt.Sprintf("fchmodat(%d, %q, %#o, %#x)", d, p, mode, flags)
			if s.sameErr(call, mns.Fchmodat(d, p, mode, flags), kns.Fchmodat(d, p, mode, flags)) {
				var ms, ks unix.Stat_t
				if s.sameErr(call+" fstatat", mns.Fstatat(d, p, &ms, flags), kns.Fstatat(d, p, &ks, flags)) {
					s.sameStat(call, &ms, &ks, false)
				}
			}
		},
		// getdents64 of a directory fd, from the start to the end on each side:
		// the set of names read, the total count, and how the listing ended (0,
		// or the error of a buffer too small for an entry). The order is ext4's
		// hash order, and a call may return fewer entries than fit (filldir64
		// stops between entries when a signal is pending: the Go runtime's
		// preemption signals), so neither the order nor the calls' counts are
		// compared. The offset of a directory is a hash cookie on ext4, so both
		// sides are put back at 0 afterwards.
		"getdents": func(t *rapid.T) {
			mfd, kfd := s.fdx()
			fd := s.drawDirFd(t, "fd")
			n := rapid.SampledFrom([]int{4096, 4096, 24, 48, 100, 0, 10}).Draw(t, "n")
			var st unix.Stat_t
			if s.k.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
				// Not a directory (or not an fd): one call, which must fail the
				// same way, and the offset is left alone.
				mr, merr := mfd.Getdents(fd, make([]byte, n))
				kr, kerr := kfd.Getdents(fd, make([]byte, n))
				s.same(fmt.Sprintf("getdents64(%d, %d)", fd, n), int64(mr), int64(kr), merr, kerr)
				return
			}
			mr0, merr := s.m.Seek(fd, 0, unix.SEEK_SET)
			kr0, kerr := s.k.Seek(fd, 0, unix.SEEK_SET)
			if !s.same(fmt.Sprintf("lseek(%d, 0, SEEK_SET)", fd), mr0, kr0, merr, kerr) {
				return
			}
			list := func(side sysFD) (names []string, total int, err error) {
				for i := 0; i < 64; i++ {
					b := make([]byte, n)
					r, err := side.Getdents(fd, b)
					if err != nil || r <= 0 {
						return names, total, err
					}
					names = append(names, direntNames(b[:r])...)
					total += r
				}
				return names, total, nil
			}
			mnames, mtotal, merr := list(mfd)
			knames, ktotal, kerr := list(kfd)
			call := fmt.Sprintf("getdents64(%d, %d) [to the end]", fd, n)
			s.same(call, int64(mtotal), int64(ktotal), merr, kerr)
			sort.Strings(mnames)
			sort.Strings(knames)
			if strings.Join(mnames, "/") != strings.Join(knames, "/") {
				t.Fatalf("%s: kernel names %q, model names %q", call, knames, mnames)
			}
			mr0, merr = s.m.Seek(fd, 0, unix.SEEK_SET)
			kr0, kerr = s.k.Seek(fd, 0, unix.SEEK_SET)
			s.same(fmt.Sprintf("lseek(%d, 0, SEEK_SET)", fd), mr0, kr0, merr, kerr)
		},
		// flock, always non-blocking: locks belong to the open file description,
		// so two descriptions of one file (open twice) conflict, dups do not.
		"flock": func(t *rapid.T) {
			mfd, kfd := s.fdx()
			fd := s.drawFileFd(t, "fd")
			how := rapid.SampledFrom([]int{unix.LOCK_SH | unix.LOCK_NB, unix.LOCK_EX | unix.LOCK_NB,
				unix.LOCK_UN, unix.LOCK_UN | unix.LOCK_NB}).Draw(t, "how")
			s.sameErr(fmt.Sprintf("flock(%d, %#x)", fd, how), mfd.Flock(fd, how), kfd.Flock(fd, how))
		},
		"ioCopyFileRange": func(t *rapid.T) {
			mfd, kfd := s.fdx()
			in, out := s.drawFileFd(t, "in"), s.drawFileFd(t, "out")
			roff, woff := drawIOOff(t, "roff"), drawIOOff(t, "woff")
			n := drawSize(t, "n")
			if s.isDirect(in) || s.isDirect(out) {
				return
			}
			call := fmt.Sprintf("copy_file_range(%d, %s, %d, %s, %d, 0)", in, offStr(roff), out, offStr(woff), n)
			mro, mwo, kro, kwo := cloneOff(roff), cloneOff(woff), cloneOff(roff), cloneOff(woff)
			mr, merr := mfd.CopyFileRange(in, mro, out, mwo, n, 0)
			kr, kerr := kfd.CopyFileRange(in, kro, out, kwo, n, 0)
			s.same(call, int64(mr), int64(kr), merr, kerr)
			if roff != nil && *mro != *kro {
				t.Fatalf("%s: kernel *off_in = %d, model %d", call, *kro, *mro)
			}
			if woff != nil && *mwo != *kwo {
				t.Fatalf("%s: kernel *off_out = %d, model %d", call, *kwo, *mwo)
			}
			s.sameOffset(call, in)
			s.sameOffset(call, out)
			if kerr == nil && kr > 0 {
				var start int64
				if woff != nil {
					start = *kwo - int64(kr)
				} else {
					cur, _ := s.k.Seek(out, 0, unix.SEEK_CUR)
					start = cur - int64(kr)
				}
				s.sameRange(call, out, start, kr)
			}
		},
		"ioSendfile": func(t *rapid.T) {
			mfd, kfd := s.fdx()
			out, in := s.drawFileFd(t, "out"), s.drawFileFd(t, "in")
			off := drawIOOff(t, "off")
			n := drawSize(t, "n")
			if s.isDirect(in) || s.isDirect(out) {
				return
			}
			call := fmt.Sprintf("sendfile(%d, %d, %s, %d)", out, in, offStr(off), n)
			mo, ko := cloneOff(off), cloneOff(off)
			outStart, _ := s.k.Seek(out, 0, unix.SEEK_CUR)
			inStart, _ := s.k.Seek(in, 0, unix.SEEK_CUR)
			if off != nil {
				inStart = *off
			}
			var ins, outs unix.Stat_t
			sameFile := s.k.Fstat(in, &ins) == nil && s.k.Fstat(out, &outs) == nil && ins.Ino == outs.Ino
			if sameFile && n > 0 && outStart < inStart+int64(n) && inStart < outStart+int64(n) {
				// Documented approximation spliceAlias: not run.
				s.mask("spliceAlias")
				return
			}
			mr, merr := mfd.Sendfile(out, in, mo, n)
			kr, kerr := kfd.Sendfile(out, in, ko, n)
			s.same(call, int64(mr), int64(kr), merr, kerr)
			if off != nil && *mo != *ko {
				t.Fatalf("%s: kernel *offset = %d, model %d", call, *ko, *mo)
			}
			s.sameOffset(call, in)
			s.sameOffset(call, out)
			if kerr == nil && kr > 0 {
				s.sameRange(call, out, outStart, kr)
			}
		},
	}
}
