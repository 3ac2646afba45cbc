// Package service implements tooldex's gRPC API (tooldex.v1.DiscoveryService)
// over the search index.
//
// It owns the tool catalog (definitions as registered, their compiled input
// schemas and how each is loaded: core, deferred or excluded), validates
// requests, converts between protobuf and index types, renders results for
// a model, and turns domain errors into gRPC status codes in one place
// (status.go). It starts no goroutines; every method is safe for concurrent
// use.
package service
