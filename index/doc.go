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
//     query terms the catalog knows of sqrt(min(points, 16) / 16), each
//     term weighted by BM25's idf of the tools it can match (a word most
//     names have, "get" or "information", counts less than a rare one), a
//     number in [0, 1] that does not depend on the other results. Points
//     themselves (Hit.Points) are the seed's, unweighted.
//   - A text scorer over four fields: name (split into words, weight
//     3.0), search hint (2.5), description (1.0) and parameters
//     (Config.ParamWeight). The default is BM25F: per field, a term's count
//     is divided by 1 - b + b × (field length / the catalog's average
//     length of that field), weighted and summed over the fields, then
//     saturated as tf / (k1 + tf) and multiplied by BM25's idf; the text
//     score is the square root of the sum's fraction of its ideal (every
//     query term saturated), a number in [0, 1]. ScorerCosine is the
//     spec's TF-IDF: per field count/max(count) × weight, the largest field
//     value per term, idf = ln(N/df), cosine similarity, and a floor of
//     0.75 for a tool whose whole multi-word name appears in the query.
//     Results under Config.MinTFIDF (0.10) are dropped.
//
// BM25F weighs down a query's request words, those people ask with
// rather than name what they want ("help", "find", "please", "want"): a
// text term whose request share is g (analysis.RequestShares, measured
// over the requests of several datasets) counts (1 − g)^48 times in the
// query (Config.RequestDamping), so "please help me find the stock price"
// is about stocks, not about a help desk.
//
// The hybrid score is KeywordWeight × keyword + TFIDFWeight × text (0.2 and
// 0.8 for BM25F, the spec's 0.4 and 0.6 for cosine). With
// Options.BlendWords, the ranked hits then give WordShare (2%) of their
// score to a plain BM25 of the query's words as written against each hit's
// own words (words.go), re-sorted: the server asks for it on the
// candidates it fuses with dense retrieval. Ties are broken by
// name, so a ranking never depends on the order tools were registered in.
// docs/BENCHMARKS.md compares both configurations.
//
// Documents are spread over shards by a hash of the name and, in large
// catalogs, each shard scores its documents in parallel. Below that size
// shards would be scored one after the other, so an index of the default
// shard count holds one until it grows large, then splits (reshard, once,
// under the write lock: about 60 ms at 32k tools). Document frequencies and the
// vocabulary are global, so the shard count never changes a score, and
// scores are summed in a canonical order (BM25F: by descending term
// weight), so an index reached through any sequence of upserts and
// removals scores exactly like one built fresh from the final set. Upsert
// and Remove cost work proportional to the document: posting lists are
// kept sorted by slot, a removed document's slot is tombstoned, and lists
// and shards are compacted once half of them is dead.
//
// The index is sized for large catalogs (about 700 bytes a tool at 100k
// tools, by tooldex-dev's bench memory). A document keeps its name and its
// forward lists (keyword words and terms, for its removal) as varint id
// gaps in one string; what derives from its name (name parts, exact-name
// spellings, name phrases) is recomputed when it leaves, and exact-name
// spellings are looked up by hash; they also find a document by its name,
// so no map by name is kept. The vocabularies find a string through a
// table of 4-byte ids (vocab.go), not a map by string. Keyword postings
// take 4 bytes, text postings 8, and full lists grow by an eighth. A
// term's or word's lists are held for the shards that have postings of it
// only (lists.go), so memory follows the postings, not the vocabulary
// times the shards.
//
// Below 32,768 deferred tools a search scores every posting of the
// query's terms, term at a time, into dense per-slot accumulators of each
// shard (the text sum, the keyword sum and points), then reads the touched
// slots in slot order and keeps the best: a document whose sums cannot
// reach the current last of the top is skipped before its score is
// computed. A query word's text term (its stem) and keyword term (the word
// as written) are scored in one pass over the text list, with the keyword
// fields of each of its documents kept beside it for the index epoch
// (pairs.go). Shards are scored one after the other, each from the n-th
// best score of those before as a floor; from there, the weakest text
// terms, whose largest contributions and every later keyword term's
// together cannot lift a document to the floor, add to the documents
// already reached only. Larger catalogs' BM25F searches skip most postings with
// MaxScore dynamic pruning over per-term score bounds (prune.go), which
// pays there and not below. Pruning is rank-safe: both paths return the
// same hits with the same scores, which the tests check against a
// document-at-a-time reference scorer. Queries with required (+) terms or
// CJK terms, keyword-only searches and the cosine scorer score every
// match. BM25F's length factors, which depend on the catalog's average
// field lengths, are computed once per index epoch and looked up by
// length.
//
// An Index is safe for concurrent use. A search sees every document either
// before or after any concurrent update, never half of one: updates take
// the index's write lock, searches its read lock.
package index
