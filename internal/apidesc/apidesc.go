// Package apidesc serves tooldex's API descriptors with their source info,
// so that the proto's comments reach reflection clients (grpcurl describe,
// buf curl, ghz). protoc-gen-go strips comments from the descriptors it
// compiles into gen/; tooldex.binpb, a FileDescriptorSet written by
// buf build from proto/ (imports included), keeps them. The package's tests
// check that it describes exactly what gen/ compiles.
package apidesc

import (
	_ "embed"
	"fmt"
	"sync"

	"google.golang.org/grpc/reflection"
	v1reflectiongrpc "google.golang.org/grpc/reflection/grpc_reflection_v1"
	v1alphareflectiongrpc "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

//go:generate go tool -modfile=../../tools/go.mod buf build ../.. --as-file-descriptor-set -o tooldex.binpb

//go:embed tooldex.binpb
var descriptorSet []byte

// files parses descriptorSet once. The set is embedded at build time and
// checked by the tests, so a failure is a broken build: it panics.
var files = sync.OnceValue(func() *protoregistry.Files {
	f, err := parse(descriptorSet)
	if err != nil {
		panic("apidesc: embedded tooldex.binpb: " + err.Error())
	}
	return f
})

func parse(data []byte) (*protoregistry.Files, error) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		return nil, err
	}
	f, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("descriptors: %w", err)
	}
	return f, nil
}

// Resolver finds descriptors in tooldex's API first (with comments), then
// in everything linked into the binary (health, reflection itself).
func Resolver() protodesc.Resolver { return resolver{files()} }

type resolver struct{ api *protoregistry.Files }

func (r resolver) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	if fd, err := r.api.FindFileByPath(path); err == nil {
		return fd, nil
	}
	return protoregistry.GlobalFiles.FindFileByPath(path)
}

func (r resolver) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	if d, err := r.api.FindDescriptorByName(name); err == nil {
		return d, nil
	}
	return protoregistry.GlobalFiles.FindDescriptorByName(name)
}

// RegisterReflection registers gRPC server reflection (v1 and v1alpha, as
// reflection.Register does) on s, answering from Resolver.
func RegisterReflection(s reflection.GRPCServer) {
	opts := reflection.ServerOptions{Services: s, DescriptorResolver: Resolver()}
	v1alphareflectiongrpc.RegisterServerReflectionServer(s, reflection.NewServer(opts))
	v1reflectiongrpc.RegisterServerReflectionServer(s, reflection.NewServerV1(opts))
}
