//go:build !amd64

package strace

// learnTableNames: the syscall table is amd64's (see the amd64 file).
func learnTableNames() {}
