// Package catalog stores tool definitions, per tenant, and who may serve
// them.
//
// # What it holds
//
// A Catalog holds tenants. Each tenant has its own tools (registered by its
// frontends or served by its tool hosts); the shared tenant
// (auth.SharedTenant) holds tools offered to every tenant. A tenant sees its
// own tools and the shared ones, its own shadowing a shared tool of the same
// name; it never sees another tenant's. Each tenant seen so far has one
// search index (index.Index) over what it sees, updated with every change
// in the same critical section, so a single-tenant deployment has exactly
// one index.
//
// An Entry is one registered tool: the *tooldexv1.Tool as registered, with
// its source and loading set, frozen (never modified after NewEntry, so it
// is shared by every response that carries it); the texts Search shows,
// derived once; and the schema views and compiled validator, made once on
// first use. Entries are made (and their schemas compiled) before the
// catalog's lock is taken: a batch of costly schemas never stalls a Search.
//
// # Ownership
//
// A tool host serves names in its principal's tenant, only names its
// principal's host patterns allow. A name served by hosts belongs to their
// principal: replicas are hosts of that principal only, and when its last
// host leaves the name stays the principal's for Config.Hold, so a stream
// blip never hands it to another principal. A host id is bound to its
// principal the same way. A tool loaded from a catalog file yields to a
// live host allowed to serve its name, and comes back when that host
// leaves. A tenant holds at most Config.MaxTenantTools tools of its own.
//
// # Errors
//
// Methods return *ValidationError, *ConflictError, *LimitError or
// *PermissionError (each names the request field at fault); the service
// chooses status codes for them.
//
// Every method is safe for concurrent use; the package starts no
// goroutines.
package catalog
