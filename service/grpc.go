package service

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	tooldexv1 "github.com/tooldex/tooldex/gen/tooldex/v1"
)

// RegisterDiscoveryService registers s on a gRPC server like
// tooldexv1.RegisterDiscoveryServiceServer, except that Search, Discover,
// Prefetch and ListTools send the catalog's tools themselves (shared, never
// modified) rather than the copies in-process callers get: a response costs
// no copy of its tools. What a client decodes is the same message either
// way (service tests check it).
func RegisterDiscoveryService(r grpc.ServiceRegistrar, s *Server) {
	desc := tooldexv1.DiscoveryService_ServiceDesc
	desc.Methods = append([]grpc.MethodDesc(nil), desc.Methods...)
	for i, m := range desc.Methods {
		switch m.MethodName {
		case "Search":
			desc.Methods[i].Handler = unaryHandler(tooldexv1.DiscoveryService_Search_FullMethodName,
				func(s *Server, ctx context.Context, req *tooldexv1.SearchRequest) (any, error) {
					return s.search(ctx, req)
				})
		case "Discover":
			desc.Methods[i].Handler = unaryHandler(tooldexv1.DiscoveryService_Discover_FullMethodName,
				func(s *Server, ctx context.Context, req *tooldexv1.DiscoverRequest) (any, error) {
					return s.discover(ctx, req)
				})
		case "Prefetch":
			desc.Methods[i].Handler = unaryHandler(tooldexv1.DiscoveryService_Prefetch_FullMethodName,
				func(s *Server, ctx context.Context, req *tooldexv1.PrefetchRequest) (any, error) {
					resp, err := s.prefetch(ctx, req)
					if err != nil {
						return nil, s.toStatus(err)
					}
					return resp, nil
				})
		case "ListTools":
			desc.Methods[i].Handler = unaryHandler(tooldexv1.DiscoveryService_ListTools_FullMethodName,
				func(s *Server, ctx context.Context, req *tooldexv1.ListToolsRequest) (any, error) {
					resp, err := s.listTools(ctx, req)
					if err != nil {
						return nil, s.toStatus(err)
					}
					return resp, nil
				})
		}
	}
	r.RegisterService(&desc, s)
}

// unaryHandler is the generated handler's shape for a method of *Server.
func unaryHandler[Req any, PReq interface {
	*Req
	proto.Message
}](method string, call func(*Server, context.Context, PReq) (any, error)) grpc.MethodHandler {
	return func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := PReq(new(Req))
		if err := dec(in); err != nil {
			return nil, err
		}
		s := srv.(*Server)
		if interceptor == nil {
			return call(s, ctx, in)
		}
		info := &grpc.UnaryServerInfo{Server: srv, FullMethod: method}
		return interceptor(ctx, in, info, func(ctx context.Context, req any) (any, error) {
			return call(s, ctx, req.(PReq))
		})
	}
}
