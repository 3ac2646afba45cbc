// Package service implements tooldex's gRPC API (tooldex.v1.DiscoveryService
// and HostService) over the catalog (package catalog) and the host registry
// (package registry).
//
// It reads each request's principal (auth.FromContext; none means the
// default tenant's anonymous principal with every scope) to choose the
// tenant it addresses, validates requests, converts between protobuf and
// index types, renders results for a model, and turns domain errors into
// gRPC status codes in one place (status.go). It starts no goroutines;
// every method is safe for concurrent use.
package service
