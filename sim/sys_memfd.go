package sim

import "syscall"

// memfd_create(2) flags.
const (
	mfdCloexec      = 0x1
	mfdAllowSealing = 0x2
	mfdHugetlb      = 0x4
	mfdNoexecSeal   = 0x8
	mfdExec         = 0x10
	mfdNameMax      = 249 // NAME_MAX - strlen("memfd:")
)

// sysMemfdCreate implements memfd_create(2) (Path: the name; Args[1]: flags):
// EINVAL for a name over 249 bytes, unknown flags, MFD_EXEC with
// MFD_NOEXEC_SEAL, or MFD_HUGETLB (the model has no hugetlbfs); EMFILE with no
// free fd. The file is an unnamed file of the model's file system (as
// O_TMPFILE|O_EXCL, nlink 0), mode 0777 (0666 with MFD_NOEXEC_SEAL), opened
// O_RDWR: unlike tmpfs's its blocks count against WithCapacity. Seals are
// accepted as fcntl accepts them (no effect).
func (k *Kernel) sysMemfdCreate(c *Call) Result {
	flags := c.Args[1]
	switch {
	case len(c.Path) > mfdNameMax,
		flags&^(mfdCloexec|mfdAllowSealing|mfdNoexecSeal|mfdExec) != 0,
		flags&mfdExec != 0 && flags&mfdNoexecSeal != 0:
		return Fail(syscall.EINVAL)
	}
	t := c.Task
	g := t.g
	limit := g.nofile.Load()
	if !g.files.hasFree(limit) {
		return Fail(syscall.EMFILE)
	}
	perm := uint32(0o777)
	if flags&mfdNoexecSeal != 0 {
		perm = 0o666
	}
	ino, err := k.fs.Root().Tmpfile(perm, true)
	if err != nil {
		return Fail(errnoOf(err))
	}
	f := newFile(k, ino, nil, syscall.O_RDWR)
	f.errseq = ino.SampleErrSeq()
	fd, e := g.files.alloc(f, 0, limit, flags&mfdCloexec != 0)
	if e != 0 {
		f.decRef()
		return Fail(e)
	}
	return Result{Ret: int64(fd)}
}
