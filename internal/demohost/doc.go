// Package demohost is a set of real, harmless and useful tools for a tool
// host (package toolhost): the tools the tooldex server serves by default
// so that a fresh server can run calls, not just find tools.
//
// The tools, all read-only and idempotent:
//
//   - time_now: the current time in an IANA time zone (UTC by default).
//   - time_convert: an RFC 3339 time converted to another zone.
//   - calculate: a small, safe arithmetic evaluator (+ - * / % ^, unary
//     minus, parentheses, sqrt abs round floor ceil min max, pi and e),
//     with positioned errors and limits of 1,000 characters and 100 levels
//     of nesting.
//   - text_stats: characters, words, lines, sentences, average word length
//     and the most frequent words of a text, common English words aside.
//   - read_file and list_files: read-only access to one directory, given to
//     Register. Paths are confined with os.OpenRoot: absolute paths, ../
//     and symlinks that lead out of the directory are refused (the caller
//     gets PERMISSION_DENIED). With no directory the two are not served.
//
// Handlers report bad input as error results (the model sees the message)
// and never panic.
package demohost
