// Package cputime reads the CPU time a thread has used, for benchmarks on
// a shared machine: what an operation costs, whatever else runs.
package cputime
