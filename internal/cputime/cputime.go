// Package cputime reads the CPU time this process has used, so that
// benchmarks can report CPU cost per operation even on a busy machine,
// where wall time mostly measures the other jobs.
package cputime
