package service

import (
	"context"
	"net"
	"testing"

	"go.uber.org/zap/zaptest"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// rawCodec sends []byte as they are: a client that encodes what protobuf
// would refuse to.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func fieldNum(m proto.Message, name string) protowire.Number {
	return m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name)).Number()
}

// TestInvalidUTF8IsInvalidArgument: invalid UTF-8 in a name, a query or
// params is INVALID_ARGUMENT naming the field (grpc-go made it INTERNAL).
func TestInvalidUTF8IsInvalidArgument(t *testing.T) {
	lis := bufconn.Listen(1 << 20)
	t.Cleanup(func() { lis.Close() })
	srv := grpc.NewServer(append(CodecOptions(), grpc.ChainUnaryInterceptor(UnaryInterceptor(zaptest.NewLogger(t))))...)
	RegisterDiscoveryService(srv, New(Config{Logger: zaptest.NewLogger(t)}))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	str := func(num protowire.Number, s string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), s)
	}
	msg := func(num protowire.Number, b []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), b)
	}
	// Execute params: Struct{fields: {"k": Value{string_value: "\xff"}}}.
	value := str(fieldNum(&structpb.Value{}, "string_value"), "\xff")
	entry := append(str(1, "k"), msg(2, value)...)
	params := msg(fieldNum(&tooldexv1.ExecuteRequest{}, "params"), msg(fieldNum(&structpb.Struct{}, "fields"), entry))
	tests := []struct {
		name, method string
		body         []byte
		field        string
	}{
		{"query", "Search", str(fieldNum(&tooldexv1.SearchRequest{}, "query"), "slack \xff"), "query"},
		{"tool name", "Execute", str(fieldNum(&tooldexv1.ExecuteRequest{}, "tool_name"), "x\xc3"), "tool_name"},
		{"params_json", "Execute", append(str(fieldNum(&tooldexv1.ExecuteRequest{}, "tool_name"), "x"), str(fieldNum(&tooldexv1.ExecuteRequest{}, "params_json"), "{\"a\":\"\xff\"}")...), "params_json"},
		{"params", "Execute", append(str(fieldNum(&tooldexv1.ExecuteRequest{}, "tool_name"), "x"), params...), "params.fields.value.string_value"},
		{"registered name", "RegisterTools", msg(fieldNum(&tooldexv1.RegisterToolsRequest{}, "tools"), str(fieldNum(&tooldexv1.Tool{}, "name"), "\xfe")), "tools.name"},
	}
	for _, tt := range tests {
		var out []byte
		err := conn.Invoke(t.Context(), "/tooldex.v1.DiscoveryService/"+tt.method, &tt.body, &out)
		st := status.Convert(err)
		if st.Code() != codes.InvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", tt.name, err)
			continue
		}
		var fields []string
		for _, d := range st.Details() {
			if br, ok := d.(*errdetails.BadRequest); ok {
				for _, v := range br.GetFieldViolations() {
					fields = append(fields, v.GetField())
				}
			}
		}
		if len(fields) != 1 || fields[0] != tt.field {
			t.Errorf("%s: fields %v, want [%s]", tt.name, fields, tt.field)
		}
	}
}

// FuzzUTF8Codec: whatever bytes arrive, the codec either decodes them as
// protobuf does, or (invalid UTF-8) leaves an empty message marked with a
// field path; it never panics.
func FuzzUTF8Codec(f *testing.F) {
	f.Add([]byte{})
	f.Add(wire(&tooldexv1.ExecuteRequest{ToolName: "x", ParamsJson: "{}"}))
	f.Add(append(wire(&tooldexv1.ExecuteRequest{ToolName: "x"}), 0x1a, 0x02, 0xff, 0xfe))
	c := utf8Codec{base: encoding.GetCodecV2(grpcproto.Name)}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got tooldexv1.ExecuteRequest
		err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &got)
		var want tooldexv1.ExecuteRequest
		werr := proto.Unmarshal(b, &want)
		field, marked := markedField(&got)
		switch {
		case werr == nil:
			if err != nil || marked || !proto.Equal(&got, &want) {
				t.Fatalf("valid input: err %v, marked %v %q", err, marked, field)
			}
		case marked:
			if field == "" || got.GetToolName() != "" || got.GetParams() != nil {
				t.Fatalf("marked message not empty: %v, field %q", &got, field)
			}
		case err == nil:
			t.Fatalf("invalid input (%v) decoded without a mark", werr)
		}
	})
}

func wire(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}
