package service

import (
	"context"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	protov2 "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// grpc-go turns any error of its codec into INTERNAL before an interceptor
// runs, and protobuf refuses proto3 strings that are not UTF-8: a request
// with invalid UTF-8 in a name, a query or params was INTERNAL. The codec
// below decodes such a message as empty, marked with an unknown field
// that names the bad string's field; the interceptors refuse a marked
// message with INVALID_ARGUMENT, and a handler without them sees an empty
// request, never a partial one.

// badUTF8Field is the unknown field number of the mark (the largest).
const badUTF8Field = protowire.MaxValidNumber

// utf8Codec is grpc-go's proto codec, marking messages with invalid UTF-8.
type utf8Codec struct{ base encoding.CodecV2 }

func (c utf8Codec) Name() string                           { return c.base.Name() }
func (c utf8Codec) Marshal(v any) (mem.BufferSlice, error) { return c.base.Marshal(v) }

func (c utf8Codec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.base.Unmarshal(data, v)
	if err == nil || !strings.Contains(err.Error(), "invalid UTF-8") {
		return err
	}
	m, ok := v.(protov2.Message)
	if !ok {
		return err
	}
	b := data.Materialize()
	r := m.ProtoReflect()
	field := badUTF8(b, r.Descriptor(), "")
	if field == "" {
		field = "(a string)"
	}
	protov2.Reset(m)
	mark := protowire.AppendTag(nil, badUTF8Field, protowire.BytesType)
	r.SetUnknown(protowire.AppendString(mark, field))
	return nil
}

// markedField returns the field the codec marked m for, if it did.
func markedField(m any) (string, bool) {
	pm, ok := m.(protov2.Message)
	if !ok {
		return "", false
	}
	unk := pm.ProtoReflect().GetUnknown()
	if len(unk) == 0 {
		return "", false
	}
	for len(unk) > 0 {
		num, typ, n := protowire.ConsumeTag(unk)
		if n < 0 {
			return "", false
		}
		unk = unk[n:]
		if num == badUTF8Field && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(unk)
			return string(v), n >= 0
		}
		n = protowire.ConsumeFieldValue(num, typ, unk)
		if n < 0 {
			return "", false
		}
		unk = unk[n:]
	}
	return "", false
}

// badUTF8 returns the path of the first string field in b (a message of
// md) that is not UTF-8, "" if none.
func badUTF8(b []byte, md protoreflect.MessageDescriptor, prefix string) string {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return ""
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		if fd == nil {
			continue
		}
		path := string(fd.Name())
		if prefix != "" {
			path = prefix + "." + path
		}
		switch fd.Kind() {
		case protoreflect.StringKind:
			if !utf8.Valid(v) {
				return path
			}
		case protoreflect.MessageKind, protoreflect.GroupKind:
			if p := badUTF8(v, fd.Message(), path); p != "" {
				return p
			}
		}
	}
	return ""
}

// invalidUTF8 is the INVALID_ARGUMENT of a marked request.
func invalidUTF8(field string) error {
	msg := "invalid UTF-8 in " + field + ": strings must be UTF-8"
	return badRequest(msg, []Violation{{Field: field, Description: "is not valid UTF-8"}})
}

// CodecOptions are server options that make a request holding invalid
// UTF-8 INVALID_ARGUMENT, naming the field, instead of INTERNAL: the
// codec and its interceptors, outermost. Pass them before other
// interceptor options.
func CodecOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ForceServerCodecV2(utf8Codec{base: encoding.GetCodecV2(proto.Name)}),
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			if field, ok := markedField(req); ok {
				return nil, invalidUTF8(field)
			}
			return handler(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			return handler(srv, utf8Stream{ss})
		}),
	}
}

// utf8Stream refuses received messages the codec marked.
type utf8Stream struct{ grpc.ServerStream }

func (s utf8Stream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if field, ok := markedField(m); ok {
		return invalidUTF8(field)
	}
	return nil
}
