package toolhost

import (
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// dialTarget returns the target and options that reach addr: a gRPC
// target as grpc.NewClient takes it (dns:///tooldex.example:50051 resolves
// every replica behind a name), or several host:port addresses separated
// by commas, tried in order (pick_first): when the replica in use goes
// away, the next session opens on the first one that answers, and the
// host registers its tools there.
func dialTarget(addr string) (string, []grpc.DialOption) {
	if !strings.Contains(addr, ",") {
		return addr, nil
	}
	var addrs []resolver.Address
	for _, a := range strings.Split(addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, resolver.Address{Addr: a})
		}
	}
	r := manual.NewBuilderWithScheme("tooldex-replicas")
	r.InitialState(resolver.State{Addresses: addrs})
	return r.Scheme() + ":///replicas", []grpc.DialOption{grpc.WithResolvers(r)}
}
