package catalog

import (
	"fmt"
	"strings"
)

// Violation is one invalid field of a request.
type Violation struct {
	Field, Description string
}

// ValidationError lists every invalid field of a request
// (INVALID_ARGUMENT).
type ValidationError struct {
	Violations []Violation
}

func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Violations))
	for _, v := range e.Violations {
		parts = append(parts, v.Field+": "+v.Description)
	}
	return strings.Join(parts, "; ")
}

// Add records a violation of field.
func (e *ValidationError) Add(field, format string, args ...any) {
	e.Violations = append(e.Violations, Violation{Field: field, Description: fmt.Sprintf(format, args...)})
}

// Err returns e, or nil when it holds no violation.
func (e *ValidationError) Err() error {
	if len(e.Violations) == 0 {
		return nil
	}
	return e
}

// ConflictError lists names another registrant owns (ALREADY_EXISTS).
type ConflictError struct {
	ValidationError
}

// Err returns e, or nil when it holds no violation.
func (e *ConflictError) Err() error {
	if len(e.Violations) == 0 {
		return nil
	}
	return e
}

// LimitError says a request would take a tenant past a limit
// (RESOURCE_EXHAUSTED).
type LimitError struct {
	// Field is the request field at fault; Limit names the configuration
	// limit (a Config field).
	Field, Limit string
	Max          int
	Detail       string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: %s (the tenant's limit %s is %d)", e.Field, e.Detail, e.Limit, e.Max)
}

// PermissionError says the principal may not do what it asked
// (PERMISSION_DENIED).
type PermissionError struct {
	Field, Reason string
}

func (e *PermissionError) Error() string { return e.Field + ": " + e.Reason }
