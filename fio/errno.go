package fio

import (
	"errors"
	"syscall"
)

func errnoOf(err error) (int, bool) {
	var e syscall.Errno
	if errors.As(err, &e) {
		return int(e), true
	}
	return 0, false
}
