package registry

import "fmt"

// Progress hands a progress report of callID to its caller (Call.Progress)
// and reports whether the call has one. Reports of calls the session does
// not have (answered, abandoned, never sent) fail with ErrUnknownCall and
// are dropped; so are those of calls whose caller takes none.
func (s *Session) Progress(callID string, payload any) error {
	r := s.r
	r.mu.Lock()
	p := s.calls[callID]
	var fn func(any)
	if p != nil && !p.abandoned {
		fn = p.progress
	}
	r.mu.Unlock()
	if p == nil {
		return fmt.Errorf("registry: session %s: progress for call %s: %w", s.id, callID, ErrUnknownCall)
	}
	if fn != nil {
		fn(payload)
	}
	return nil
}
