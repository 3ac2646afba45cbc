package service

import (
	"github.com/tooldex/tooldex/internal/catalog"
)

// maxViolationsSent caps the field violations of one status.
const maxViolationsSent = 100

// Violation is one invalid field.
type Violation = catalog.Violation

// ValidationError lists every invalid field of a request
// (INVALID_ARGUMENT): the catalog's, with the lower-case helpers this
// package's handlers use.
type ValidationError struct{ catalog.ValidationError }

func (e *ValidationError) add(field, format string, args ...any) { e.Add(field, format, args...) }

func (e *ValidationError) err() error {
	if len(e.Violations) == 0 {
		return nil
	}
	return &e.ValidationError
}
