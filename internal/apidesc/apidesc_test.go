package apidesc

import (
	"context"
	"net"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestFresh: the embedded set describes exactly what gen/ compiles, file
// by file, once its comments are set aside. A proto edited without
// regenerating tooldex.binpb (go generate ./internal/apidesc) fails here.
func TestFresh(t *testing.T) {
	api := files()
	n := 0
	protoregistry.GlobalFiles.RangeFilesByPackage("tooldex.v1", func(compiled protoreflect.FileDescriptor) bool {
		n++
		embedded, err := api.FindFileByPath(compiled.Path())
		if err != nil {
			t.Errorf("%s is compiled into gen/ but not in tooldex.binpb: %v", compiled.Path(), err)
			return true
		}
		got := protodesc.ToFileDescriptorProto(embedded)
		got.SourceCodeInfo = nil
		want := protodesc.ToFileDescriptorProto(compiled)
		if !proto.Equal(got, want) {
			t.Errorf("%s: tooldex.binpb differs from gen/ (run go generate ./internal/apidesc)", compiled.Path())
		}
		return true
	})
	if n == 0 {
		t.Fatal("no tooldex.v1 files linked in")
	}
	if got := api.NumFilesByPackage("tooldex.v1"); got != n {
		t.Errorf("tooldex.binpb has %d tooldex.v1 files, gen/ %d", got, n)
	}
}

// TestComments: the proto's comments are in the descriptors served.
func TestComments(t *testing.T) {
	d, err := Resolver().FindDescriptorByName("tooldex.v1.DiscoveryService.Search")
	if err != nil {
		t.Fatal(err)
	}
	got := d.ParentFile().SourceLocations().ByDescriptor(d).LeadingComments
	if want := "Search runs a ToolSearch query"; !strings.Contains(got, want) {
		t.Errorf("Search's leading comment = %q, want it to contain %q", got, want)
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	if _, err := parse([]byte("\xff\xff\xff")); err == nil {
		t.Error("parse(garbage) = nil error")
	}
	// A set whose file imports something it does not hold.
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{{
		Name: proto.String("a.proto"), Dependency: []string{"missing.proto"},
	}}}
	data, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parse(data); err == nil {
		t.Error("parse(set with a missing import) = nil error")
	}
}

// TestReflection asks a server over the reflection protocol, as grpcurl
// does: tooldex's files come with comments, and services outside the API
// (health) still resolve.
func TestReflection(t *testing.T) {
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer()
	tooldexv1.RegisterDiscoveryServiceServer(gs, tooldexv1.UnimplementedDiscoveryServiceServer{})
	healthpb.RegisterHealthServer(gs, health.NewServer())
	RegisterReflection(gs)
	go gs.Serve(lis)
	defer gs.Stop()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ask := func(symbol string) []*descriptorpb.FileDescriptorProto {
		t.Helper()
		if err := stream.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: symbol}}); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if e := resp.GetErrorResponse(); e != nil {
			t.Fatalf("%s: %s", symbol, e.GetErrorMessage())
		}
		var out []*descriptorpb.FileDescriptorProto
		for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
			fd := new(descriptorpb.FileDescriptorProto)
			if err := proto.Unmarshal(b, fd); err != nil {
				t.Fatal(err)
			}
			out = append(out, fd)
		}
		return out
	}
	var found bool
	for _, fd := range ask("tooldex.v1.DiscoveryService") {
		if fd.GetName() != "tooldex/v1/discovery.proto" {
			continue
		}
		found = true
		var comments int
		for _, loc := range fd.GetSourceCodeInfo().GetLocation() {
			if loc.GetLeadingComments() != "" {
				comments++
			}
		}
		if comments < 100 {
			t.Errorf("discovery.proto served with %d leading comments, want the proto's (over 100)", comments)
		}
	}
	if !found {
		t.Error("tooldex/v1/discovery.proto not served for tooldex.v1.DiscoveryService")
	}
	if fds := ask("grpc.health.v1.Health"); len(fds) == 0 {
		t.Error("grpc.health.v1.Health: no files")
	}
}
