//go:build !amd64

package rank

import "github.com/higmem/higmem/internal/vec"

// eachKernel calls fn with each CPU-feature set of package vec's scans;
// this package has only Go loops off amd64.
func eachKernel(fn func(name string)) { vec.EachKernel(fn) }

// eachRankKernel calls fn with this package's kernels: off amd64, the Go
// loops.
func eachRankKernel(fn func(name string)) { fn("go") }
