package limit

import (
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// MaxMessageBytes is the largest gRPC message every part of tooldex sends
// and accepts: the server (its default for --max-message-bytes), the host
// SDK (toolhost), the MCP bridge (a toolhost) and the MCP façade and CLI
// (DialOptions). A host that could receive less than the server sends had
// its stream cut by one large call, failing every other call on it.
const MaxMessageBytes = 16 << 20

// MaxParamsBytes bounds a call's parameters as a host receives them: the
// params Struct's encoded size, and params_json's length when it is set,
// each. An Execute frame carries both, so it stays well under
// MaxMessageBytes.
const MaxParamsBytes = 4 << 20

// ErrTooLarge: a message or parameters exceed their bound.
var ErrTooLarge = errors.New("too large")

// DialOptions are the options every tooldex client connection needs: it
// sends and receives messages of up to MaxMessageBytes.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(MaxMessageBytes),
		grpc.MaxCallSendMsgSize(MaxMessageBytes),
	)}
}

// SizeError says which field is too large and by how much.
type SizeError struct {
	Field       string
	Size, Limit int
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, at most %d", e.Field, e.Size, e.Limit)
}

// Unwrap makes a SizeError match ErrTooLarge.
func (e *SizeError) Unwrap() error { return ErrTooLarge }

// CheckParams reports whether a call's parameters fit the frame that takes
// them to a host: st (the params Struct, possibly decoded from paramsJSON)
// and paramsJSON (empty when the caller sent a Struct) are each at most
// MaxParamsBytes. The error is a *SizeError (field "params" or
// "params_json"), matching ErrTooLarge. Call it before any other work on
// the parameters.
func CheckParams(st *structpb.Struct, paramsJSON string) error {
	if n := len(paramsJSON); n > MaxParamsBytes {
		return &SizeError{Field: "params_json", Size: n, Limit: MaxParamsBytes}
	}
	if n := proto.Size(st); n > MaxParamsBytes {
		field := "params"
		if paramsJSON != "" {
			field = "params_json" // decoded: the caller sent text
		}
		return &SizeError{Field: field, Size: n, Limit: MaxParamsBytes}
	}
	return nil
}

// CheckMessage reports whether m fits in a message to a peer (at most
// MaxMessageBytes), as a *SizeError naming field.
func CheckMessage(field string, m proto.Message) error {
	if n := proto.Size(m); n > MaxMessageBytes {
		return &SizeError{Field: field, Size: n, Limit: MaxMessageBytes}
	}
	return nil
}
