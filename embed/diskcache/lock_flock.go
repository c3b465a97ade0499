//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package diskcache

import (
	"os"
	"syscall"
)

// lock takes an exclusive flock(2) on f, so that a process opening the
// file never reads (and cuts off as torn) a record another is writing.
func lock(f *os.File) (unlock func(), err error) {
	fd := int(f.Fd())
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = syscall.Flock(fd, syscall.LOCK_UN) }, nil
}
