// Package opensearchlocal is a strict local stand-in for the slice of OpenSearch's REST API
// that the knowledge-base feature uses, because no OpenSearch distribution can be had on the
// project's machines. It is a test double of the outside service: an http.Handler holding every
// index in memory, safe for concurrent use, with no persistence. `make dev` serves it at
// http://127.0.0.1:9200 (infra/localstack starts it in-process, like the S3 stand-in).
//
// It reports itself as OpenSearch 2.19.0 (the deployed domain's version) with the k-NN and
// neural-search plugins.
//
// # The slice
//
//   - GET / (and HEAD /, which answers GET's headers without a body): cluster name and version.
//   - PUT /{index} with settings (number_of_shards, number_of_replicas, refresh_interval, knn,
//     knn.algo_param.ef_search, max_result_window; nested or flat, with or without "index.")
//     and mappings (text, keyword, long, integer, short, byte, double, float, half_float,
//     boolean, date, object, knn_vector; _source enabled/includes/excludes; dynamic true, false,
//     strict; dynamic mapping of new fields as OpenSearch does: strings become text with a
//     keyword sub-field, dates are detected); HEAD, GET (flat_settings) and DELETE /{index}
//     (comma lists, wildcards, _all).
//   - POST /{index}/_doc, PUT|POST /{index}/_doc/{id} (op_type, if_seq_no/if_primary_term,
//     refresh), indices created on first write as with action.auto_create_index.
//   - GET|HEAD /{index}/_doc/{id} (real-time unless realtime=false; refresh; _source,
//     _source_includes, _source_excludes): the document with _version, _seq_no and found, or
//     404 {found: false}; HEAD answers 200 or 404 without a body. DELETE /{index}/_doc/{id}
//     (refresh, if_seq_no/if_primary_term): result deleted, or 404 not_found; a delete never
//     creates its index.
//   - POST|PUT /_bulk and /{index}/_bulk: index, create, delete and update with a partial
//     "doc" (doc_as_upsert, upsert, detect_noop); per-item results and errors.
//   - GET|POST /_search and /{index}/_search: query (match_all, term with case_insensitive,
//     terms, match with operator / minimum_should_match / zero_terms_query, bool with must,
//     should, must_not, filter and minimum_should_match, knn, hybrid), size, from, _source
//     filtering, track_total_hits, min_score, version, seq_no_primary_term, named queries
//     (matched_queries), search_pipeline.
//   - knn (on indices with index.knn: true, as OpenSearch needs for ANN methods): vector with k,
//     min_score or max_distance (exactly one), filter (applied before the
//     k nearest are chosen, like efficient filtering), ignore_unmapped, boost, _name,
//     method_parameters.ef_search. Spaces l2, cosinesimil, innerproduct, l1, linf with the
//     plugin's score translations per engine (faiss, lucene, nmslib). Search is exact (brute
//     force) and returns the global top k, as a single shard with a single segment would: real
//     clusters return up to k per segment per shard before the size cut, and HNSW is
//     approximate, so recall can only be checked against OpenSearch on AWS.
//   - match and term on text and keyword fields score with Lucene's BM25 (k1 1.2, b 0.75,
//     idf = ln(1 + (N - n + 0.5)/(n + 0.5)) over the field's document count, one-byte length
//     norms) after the field's analyzer: OpenSearch's standard analyzer (Unicode word
//     boundaries, lowercase) unless the mapping names the built-in english one (possessives,
//     Lucene's English stop words, Porter stemming; english.go) as analyzer or search_analyzer,
//     or the match query names one. Term statistics cover live documents only (Lucene also
//     counts deleted ones until a merge).
//   - hybrid with a search pipeline: PUT|GET|DELETE /_search/pipeline/{id} with a
//     normalization-processor (min_max or l2; arithmetic_mean, geometric_mean or
//     harmonic_mean with weights) or a score-ranker-processor (rrf, rank_constant).
//   - GET|POST /_count and /{index}/_count, POST /{index}/_delete_by_query (conflicts,
//     max_docs, refresh), GET|POST /_refresh and /{index}/_refresh.
//
// Near-real-time visibility: writes become searchable only after a refresh: ?refresh=true,
// ?refresh=wait_for (which waits for the next one), _refresh, or the periodic refresh every
// index.refresh_interval (1s by default, -1 disables it). As in OpenSearch, an index nobody
// searched for 30 s skips periodic refreshes unless the interval was set explicitly, and the
// next search refreshes it first. Delete-by-query searches the last refresh's view, so a
// document deleted or changed since then is a version conflict.
//
// # Strictness
//
// What OpenSearch rejects, the stand-in rejects with OpenSearch's error body
// ({"error":{"root_cause":[…],"type","reason",…},"status"}) and status: unknown query
// parameters (illegal_argument_exception "contains unrecognized parameter"), malformed JSON
// (json_parse_exception), unknown body keys (parsing_exception, x_content_parse_exception),
// unknown mapping parameters and field types (mapper_parsing_exception), unknown settings
// (illegal_argument_exception), existing indices (resource_already_exists_exception), missing
// indices (index_not_found_exception), invalid index names (invalid_index_name_exception),
// malformed bulk lines (illegal_argument_exception), vector dimension mismatches
// (mapper_parsing_exception caused by illegal_argument_exception when indexing;
// search_phase_execution_exception over query_shard_exception when searching), version
// conflicts (version_conflict_engine_exception), strict dynamic mappings
// (strict_dynamic_mapping_exception). Error types and statuses follow OpenSearch; reasons use
// OpenSearch's wording where it is known, and are close paraphrases elsewhere (mostly the k-NN
// mapping validations).
//
// What OpenSearch accepts but the stand-in does not implement (other query types, aggregations,
// sort, scripts, analyzers other than standard and english, the _analyze API, nested fields, aliases, ingest pipelines,
// byte/binary vectors, on-disk mode, trained models) is rejected with a 400
// illegal_argument_exception whose reason starts with "opensearchlocal:" and says so — never
// silently ignored. An endpoint outside the slice answers as OpenSearch answers a route it has
// no handler for: 400 {"error": "no handler found for uri [<uri>] and method [<method>]"}; a
// served path with another method answers 405 "Incorrect HTTP method …, allowed: […]". The
// upstream test stories of the slice that the stand-in does not pass, and why, are listed in
// UPSTREAM-STORIES.md.
//
// # Memory
//
// A document keeps its _source as bytes with its knn_vector arrays cut out when encoding/json
// would write them exactly as sent (they are written again from the float32 values when read),
// its vectors as []float32, and its indexed terms; searches keep only the best from+size (or k)
// hits in a heap. BenchmarkCorpus measures a corpus of the local model's chunks. Parameters that cannot change a single in-memory shard's answer (timeouts,
// wait_for_active_shards, routing in bulk lines, cluster_manager_timeout) are accepted.
package opensearchlocal
