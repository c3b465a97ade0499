//go:build unix

package higmem_test

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of this process, so that
// benchmarks can report CPU cost per operation even on a busy machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
