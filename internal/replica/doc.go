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
// A NATS that comes back without its store holds a new stream (another
// creation time): the replica makes the buckets again, hands out
// revisions above all it handed out before, writes back the registrations
// it holds where the new bucket has no entry for their key, and watches
// the new bucket from its beginning.
//
// # Presence
//
// Bucket TOOLDEX_HOSTS holds each replica's liveness and host sessions;
// Presence.Hosts lists the other replicas' sessions (ListHosts).
//
// # Goroutines
//
// Watch runs on its caller's goroutine until its ctx is done; Node owns
// the embedded server's goroutines and stops them in Close.
package replica
