// Package jsonl reads JSON Lines: one value a line, blank lines skipped,
// lines of any length. It is the one line reader of the tool files
// (toolfile), the evaluation datasets (eval) and the benchmark corpus
// (internal/benchcorpus); decoding each line is the caller's.
package jsonl

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// Each calls fn for every line of r that is not blank, with its 1-based
// line number, the byte offset in r where it starts and its bytes without
// the '\n' (a copy fn may keep). It stops at the first error of r or fn
// and returns it as it is.
func Each(r io.Reader, fn func(n int, offset int64, line []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	var offset int64
	for n := 1; ; n++ {
		data, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return err
		}
		start := offset
		offset += int64(len(data))
		line := bytes.TrimSuffix(data, []byte("\n"))
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := fn(n, start, line); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// ReadFile calls fn for every line of the file that is not blank, as Each
// does. An error of fn comes back as "path:n: err", one of the file as
// "path: err".
func ReadFile(path string, fn func(n int, line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var lineErr bool
	err = Each(f, func(n int, _ int64, line []byte) error {
		if err := fn(n, line); err != nil {
			lineErr = true
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		return nil
	})
	if err != nil && !lineErr {
		return fmt.Errorf("%s: %w", path, err)
	}
	return err
}
