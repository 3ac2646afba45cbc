// Package dialtarget turns a tooldex address, as users give it, into a
// gRPC target: one address or name as grpc.NewClient takes it
// (dns:///tooldex.example:50051 resolves every replica behind a name), or
// several host:port addresses separated by commas, tried in order
// (pick_first): when the replica in use goes away, the next connection
// goes to the first that answers.
package dialtarget

import (
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// Scheme is the resolver scheme of a list of addresses.
const Scheme = "tooldex-replicas"

// Of returns the target and dial options that reach addr.
func Of(addr string) (string, []grpc.DialOption) {
	if !strings.Contains(addr, ",") {
		return addr, nil
	}
	var addrs []resolver.Address
	for _, a := range strings.Split(addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, resolver.Address{Addr: a})
		}
	}
	r := manual.NewBuilderWithScheme(Scheme)
	r.InitialState(resolver.State{Addresses: addrs})
	return Scheme + ":///replicas", []grpc.DialOption{grpc.WithResolvers(r)}
}
