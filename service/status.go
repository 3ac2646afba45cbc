package service

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/tooldex/tooldex/auth"
	"github.com/tooldex/tooldex/index"
	"github.com/tooldex/tooldex/internal/catalog"
	"github.com/tooldex/tooldex/internal/limit"
	"github.com/tooldex/tooldex/internal/schema"
	"github.com/tooldex/tooldex/internal/textcut"
	"github.com/tooldex/tooldex/registry"
)

// Host session errors, mapped below.
var (
	// errSessionClosed: the registry ended the session (UNAVAILABLE).
	errSessionClosed = errors.New("host session closed: no heartbeat within the timeout, or drained")
	// errShuttingDown: the server closes host streams (UNAVAILABLE).
	errShuttingDown = errors.New("server is shutting down")
	// errNoHello: a host stream sent no hello in time (DEADLINE_EXCEEDED).
	errNoHello = fmt.Errorf("no hello within %v", helloTimeout)
)

// panicStatus is the status of a call whose handler panicked; the panic
// is logged where it was recovered.
func panicStatus() error { return status.Error(codes.Internal, "internal error") }

// toStatus turns a domain error into a gRPC status error. It is the only
// place that chooses status codes. Unknown errors become INTERNAL with an
// opaque message and are logged once here.
func (s *Server) toStatus(err error) error { return statusOf(s.log, err) }

// statusOf is toStatus logging to log; for interceptors (limits.go).
func statusOf(log *zap.Logger, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var ve *catalog.ValidationError
	var ce *catalog.ConflictError
	var le *catalog.LimitError
	var pe *catalog.PermissionError
	var se *limit.SizeError
	var cnt *limit.CountError
	var deep *limit.DepthError
	var rl *limit.LimitError
	var spe *schema.ParamsError
	if st := authStatus(err); st != nil {
		return st
	}
	switch {
	case errors.As(err, &ce):
		return withViolations(codes.AlreadyExists, "conflict: "+ce.Error(), ce.Violations)
	case errors.As(err, &ve):
		return badRequest("invalid request: "+ve.Error(), ve.Violations)
	case errors.As(err, &le):
		return withViolations(codes.ResourceExhausted, le.Error(), []Violation{{Field: le.Field, Description: le.Detail}})
	case errors.As(err, &pe):
		return withViolations(codes.PermissionDenied, "permission denied: "+pe.Error(), []Violation{{Field: pe.Field, Description: pe.Reason}})
	case errors.Is(err, ErrToolNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, ErrDenied):
		return status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, registry.ErrNoHost):
		return status.Error(codes.Unavailable, err.Error()+": no live tool host serves this tool; retry when one connects")
	case errors.Is(err, registry.ErrHostGone):
		return status.Error(codes.Unavailable, err.Error()+": the tool host went away during the call; its outcome is unknown")
	case errors.Is(err, registry.ErrOverloaded):
		return status.Error(codes.ResourceExhausted, err.Error()+": every host serving this tool is busy; retry shortly")
	case errors.As(err, &se):
		return badRequest(se.Error(), []Violation{{Field: se.Field, Description: se.Error()}})
	case errors.As(err, &cnt):
		return badRequest(cnt.Error(), []Violation{{Field: cnt.Field, Description: cnt.Error()}})
	case errors.As(err, &deep):
		return badRequest(deep.Error(), []Violation{{Field: deep.Field, Description: deep.Error()}})
	case errors.As(err, &rl):
		return limited(rl)
	case errors.Is(err, schema.ErrTooMuchWork):
		return badRequest(err.Error(), []Violation{{Field: "params", Description: err.Error()}})
	case errors.Is(err, schema.ErrBadParams):
		return badRequest(err.Error(), []Violation{{Field: "params", Description: err.Error()}})
	case errors.As(err, &spe):
		vs := make([]Violation, 0, len(spe.Violations))
		for _, v := range schema.Violations(spe) {
			vs = append(vs, Violation{Field: v.Path, Description: v.Description})
		}
		return badRequest(spe.Error(), vs)
	case errors.Is(err, ErrJournal):
		return status.Error(codes.Unavailable, err.Error()+": the write was not stored; retry")
	case errors.Is(err, errSessionClosed), errors.Is(err, errShuttingDown):
		return status.Error(codes.Unavailable, err.Error())
	case errors.Is(err, errNoHello):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, index.ErrInvalidQuery):
		return badRequest(err.Error(), []Violation{{Field: "query", Description: err.Error()}})
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	log.Error("internal error", zap.Error(err))
	return status.Error(codes.Internal, "internal error")
}

// limited is RESOURCE_EXHAUSTED with a google.rpc.RetryInfo saying when
// to come back.
func limited(le *limit.LimitError) error {
	st := status.New(codes.ResourceExhausted, "rate limited: "+le.Error())
	if d, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(le.RetryAfter)}); err == nil {
		st = d
	}
	return st.Err()
}

// errMultipleAuthorization: a call with more than one authorization value.
var errMultipleAuthorization = fmt.Errorf("%w: more than one authorization metadata value", auth.ErrUnauthenticated)

// errUnknownMethod: a method the authorization table does not list.
type errUnknownMethod struct{ method string }

func (e errUnknownMethod) Error() string {
	return "method " + e.method + " is not open to any principal"
}

// AuthStatus turns an auth error (auth.ErrUnauthenticated, a
// *auth.MissingScopeError) into its status: UNAUTHENTICATED, or
// PERMISSION_DENIED naming the scope. Other errors become INTERNAL; use it
// where no *Server is at hand (the auth interceptors).
func AuthStatus(err error) error {
	if err == nil {
		return nil
	}
	if st := authStatus(err); st != nil {
		return st
	}
	return status.Error(codes.Internal, "internal error")
}

// authStatus is AuthStatus's mapping, nil for an error it does not know.
// err may name the request field at fault (caller: ...).
func authStatus(err error) error {
	var mse *auth.MissingScopeError
	var um errUnknownMethod
	switch {
	case errors.Is(err, auth.ErrUnauthenticated):
		return status.Error(codes.Unauthenticated, err.Error())
	case errors.As(err, &mse):
		return status.Error(codes.PermissionDenied, "permission denied: "+err.Error())
	case errors.As(err, &um):
		return status.Error(codes.PermissionDenied, "permission denied: "+um.Error())
	}
	return nil
}

func badRequest(msg string, vs []Violation) error {
	return withViolations(codes.InvalidArgument, msg, vs)
}

// withViolations returns a status with a google.rpc.BadRequest detail.
func withViolations(code codes.Code, msg string, vs []Violation) error {
	// Cut at a rune boundary: a status message that is not valid UTF-8
	// cannot be marshaled and its details would be dropped.
	if m, cut := textcut.Prefix(msg, 1024); cut {
		msg = m + "…"
	}
	st := status.New(code, msg)
	br := &errdetails.BadRequest{}
	for i, v := range vs {
		if i == maxViolationsSent {
			break
		}
		br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{
			Field: v.Field, Description: v.Description,
		})
	}
	if withDetails, err := st.WithDetails(br); err == nil {
		st = withDetails
	}
	return st.Err()
}
