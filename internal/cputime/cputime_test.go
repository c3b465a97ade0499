package cputime

import (
	"runtime"
	"testing"
)

// TestProcessGrows checks that spinning the CPU shows in Process on the
// platforms that measure it.
func TestProcessGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("CPU time is not measured here")
	}
	before := Process()
	var x int64
	for i := int64(0); Process()-before < 5e6 && i < 1e10; i++ { // 5 ms of CPU
		x += i
	}
	if Process() <= before {
		t.Fatalf("CPU time did not grow (%d)", x)
	}
}
