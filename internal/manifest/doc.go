// Package manifest renders what a frontend sends a model provider on its
// first request: the core tools plus the two entry tools, ToolSearch and
// ExecuteTool, in the provider's own tools format; the names of the deferred
// tools in an <available-deferred-tools> block; and a short system-prompt
// text that teaches the model to search before it concludes that a
// capability is missing. It also renders a search result as tool_result
// content (SearchContent). It is pure rendering: no I/O, no goroutines, and
// every function is safe for concurrent use.
//
// # Providers
//
//   - anthropic: the Messages API tools array,
//     [{"name", "description", "input_schema"}]. With Options.ToolReference
//     the deferred tools follow the core and entry tools with
//     "defer_loading": true, as Anthropic's tool search expects: a
//     tool_reference block that ToolSearch returns (SearchContent) must name a
//     tool present in the request, and the API then expands it into the full
//     definition without touching the cached prompt prefix. Keep
//     cache_control off the deferred tools: the API refuses both on one tool.
//   - openai: Chat Completions, [{"type": "function", "function": {...}}], by
//     default, or the Responses API, [{"type": "function", "name", ...}], when
//     Options.OpenAIAPI is "responses". Responses function tools always carry
//     "strict", true or false, because that API treats a missing strict as
//     true (its SDK marks the field required).
//   - gemini: one Tool object, {"functionDeclarations": [...]}, whose
//     parameters are projected onto the OpenAPI subset Gemini accepts
//     (ProjectGeminiSchema).
//   - grok: xAI's API is OpenAI-compatible; rendered as OpenAI Chat
//     Completions (Options.OpenAIAPI is ignored).
//
// Every input schema loses its "$schema" keyword (metadata the providers do
// not need and some refuse) and gains "type": "object" at its root when it
// has none; a tool with no schema gets {"type": "object"}. Otherwise
// Anthropic and non-strict OpenAI/Grok get the schema as registered.
//
// # Strict mode (openai, grok)
//
// With Options.Strict every object gets "additionalProperties": false and
// lists all its properties in "required"; a property that was optional
// becomes nullable (type [t, "null"], null added to its enum, or
// anyOf [schema, {"type": "null"}]). allOf is merged into its parent, oneOf
// becomes anyOf, and keywords strict mode refuses are dropped: not,
// if/then/else, dependentRequired, dependentSchemas, dependencies,
// propertyNames, unevaluatedProperties, unevaluatedItems, contains,
// minContains, maxContains, uniqueItems, minLength, maxLength,
// minProperties, maxProperties, prefixItems, default, examples, $id,
// $comment, readOnly, writeOnly, deprecated, contentEncoding,
// contentMediaType, nullable, and any format but date-time, time, date,
// duration, email, hostname, ipv4, ipv6 and uuid. Dropping only widens what
// the model may send; Execute still validates against the registered schema.
// In strict mode the model sends null for a property it leaves out (for
// ToolSearch, "max_results": null); a frontend drops such nulls before it
// runs a core tool or forwards the call.
//
// Strict mode cannot express a value that may be anything: a free-form
// object (a nested object without properties, like ExecuteTool's params, or
// one with additionalProperties or patternProperties), an array without
// items, a schema with no type, or anyOf at the root. Making such a schema
// strict would forbid inputs the tool accepts, so that one tool is sent
// non-strict (its schema as registered) and listed in
// Manifest.SchemaFallbacks; the others stay strict.
//
// # Gemini
//
// Gemini's legacy "parameters" field takes a subset of OpenAPI 3.0 and
// answers 400 to anything else; ProjectGeminiSchema documents each rule.
// Two things cannot be projected: a free-form value (an OBJECT without
// properties, like ExecuteTool's params, which Gemini refuses with "should
// be non-empty for OBJECT type"; an ARRAY without items; a schema with no
// type) and recursion deeper than the $ref inlining limit. A tool whose
// projection contains one is sent with "parametersJsonSchema" (plain JSON
// Schema, which Gemini 2.5 and later accept) instead of "parameters", and
// listed in Manifest.SchemaFallbacks. A tool whose root object has no
// properties at all is sent without parameters.
//
// Gemini function names must match ^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$, while
// registered names match ^[a-zA-Z0-9_-]{1,64}$. A name that starts with a
// digit or '-' is sent as "t." + name. Registered names never contain '.', so
// the mapping is collision-free and ToolName reverses it; Manifest.Mappings
// lists every name that changed. The one cost: a 63- or 64-character name
// that starts with a digit or '-' becomes 65 or 66 characters, over the old
// 64-character rule (current Gemini documents 128).
//
// # Determinism and prompt caching
//
// The same inputs give byte-identical output, whatever the order of the
// input slices: tools are sorted by name (core tools, then ToolSearch and
// ExecuteTool), maps are marshalled with sorted keys and HTML characters are
// not escaped. Fingerprint is the hex SHA-256 of ToolsJSON, "\n" and
// SystemPrompt; equal fingerprints mean a provider's prompt cache still
// holds. Deferred tools coming and going change DeferredNames and
// DeferredBlock only, never ToolsJSON, SystemPrompt or the fingerprint:
// frontends put the block after the cached prefix. The exception is
// Anthropic with ToolReference, where the deferred definitions must be in
// the tools array, so any change to them changes ToolsJSON and the
// fingerprint. That is the trade-off of Anthropic's design: deferred tools
// cost no prompt tokens and found tools are expanded without rewriting the
// prefix, but the catalog itself is part of the request.
//
// Tools named ToolSearch or ExecuteTool in the catalog are replaced by this
// package's own definitions (EntryTools), which the descriptions and the
// system prompt are written for.
package manifest
