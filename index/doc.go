// Package index is tooldex's in-memory search index over tool definitions.
//
// It holds two kinds of document. Core tools are known by name only: select:
// and exact-name queries find them and report them as already loaded, but
// they are never ranked. Deferred tools are ranked by a hybrid of two
// scorers:
//
//   - A keyword scorer with Claude Code's point scheme, per query term: a
//     name part equal to the term scores 12 for MCP tools (mcp__server__tool)
//     and 10 otherwise; a name part that contains the term scores 6 / 5; a
//     search-hint word 4; a description word 2. Stop words and one-letter
//     terms never score, and words match whole (no regex scan: every field is
//     an inverted list). The keyword score of a tool is the mean over the
//     query terms the catalog knows of min(points, 16) / 16, a number in
//     [0, 1] that does not depend on the other results.
//   - TF-IDF with field weights (name 3.0, search hint 2.5, description 1.0,
//     parameters Config.ParamWeight; per term the largest field value wins),
//     idf = ln(N/df) over deferred tools, and cosine similarity. A tool whose
//     whole name appears as words in the query gets at least 0.75; results
//     under 0.10 are dropped.
//
// The hybrid score is KeywordWeight × keyword + TFIDFWeight × TF-IDF (0.4 and
// 0.6 by default). Ties are broken by name, so a ranking never depends on the
// order tools were registered in.
//
// Documents are spread over shards by a hash of the name and each shard
// scores its documents in parallel. Document frequencies and the
// vocabulary are global, so the shard count never changes a score, and
// scores are summed in a canonical order, so an index reached through any
// sequence of upserts and removals scores exactly like one built fresh from
// the final set. Upsert and Remove cost work proportional to the document.
//
// An Index is safe for concurrent use. A search sees every document either
// before or after any concurrent update, never half of one: updates take
// the index's write lock, searches its read lock.
package index
