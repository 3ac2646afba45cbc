// Package cputime reads the CPU time a thread or the whole process has
// used, for benchmarks on a shared machine: what an operation costs,
// whatever else runs.
package cputime
