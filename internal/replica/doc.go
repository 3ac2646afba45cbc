// Package replica runs tooldex replicas on NATS: the connection (an
// embedded single-node NATS server with JetStream on a data directory, or
// an external NATS cluster), the catalog journal every replica shares (a
// JetStream key-value bucket), and the presence of host sessions across
// replicas with the forwarding of calls to them.
//
// # The catalog journal
//
// Bucket TOOLDEX_CATALOG holds one key per frontend-registered tool,
// t.<tenant>.<name> (both base64url, so any name is a valid key), whose
// value is the tool as the catalog stores it (protobuf, source and loading
// set); a removal is a delete marker. The stream sequence of a write is
// its revision, which orders writes on every replica. Journal implements
// service.Journal (writes) and Watch delivers every write, past and
// future, to an Applier (service.Server.ApplyJournal); a replica's own
// writes come back too and are skipped by revision. Catalog files are not
// in the bucket: every replica loads them from the file at each start.
//
// # Goroutines
//
// Watch runs on its caller's goroutine until its ctx is done; Node owns
// the embedded server's goroutines and stops them in Close.
package replica
