//go:build !amd64

package vec

// EachKernel calls fn once for each set of CPU-feature kernels this
// machine can run: off amd64 only the Go loops, named "go". For tests
// only.
func EachKernel(fn func(name string)) { fn("go") }
