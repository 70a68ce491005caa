// Package vectors is the OpenSearch k-NN adapter of the knowledge bases: one index per embedding
// space (model and dimension) shared by every knowledge base of every company that uses it, with
// tenancy in a filter on kb_id and company that every query and every delete carries. It stores
// chunks with _bulk, deletes a file's or a knowledge base's chunks with _delete_by_query and
// searches them with one request per call: k-NN (dense), BM25, or a hybrid query of both under
// a normalization or an RRF search pipeline. infra/README.md ("OpenSearch: one index per
// embedding space") defends the design.
package vectors

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"
	"github.com/opensearch-project/opensearch-go/v4/opensearchtransport"
	"github.com/opensearch-project/opensearch-go/v4/signer/awsv2"

	"github.com/agentorch/agentorch/shared/backoff"
)

// DefaultPrefix starts every index and pipeline name when Options.Prefix is empty.
const DefaultPrefix = "agentorch-kb"

// Options configure a Store.
type Options struct {
	// Prefix starts every index and search pipeline name (default DefaultPrefix); stacks that
	// share a domain use different prefixes.
	Prefix string
	// Shards is number_of_shards of new indices (default 1: a shard holds millions of chunks,
	// see infra/README.md).
	Shards int
	// Replicas is number_of_replicas of new indices. The default 0 suits the template's
	// one-node domain, where a replica could never be allocated; set 1 on two or more nodes.
	Replicas int
}

// Store reads and writes chunks in the indices named by its prefix. It is safe for concurrent
// use and remembers, per process, which indices and pipelines it has already ensured.
type Store struct {
	client   *opensearchapi.Client
	prefix   string
	shards   int
	replicas int

	mu        sync.Mutex
	dims      map[string]int // index → dimension of the indices known to exist
	pipelines bool           // the search pipelines were put by this process
}

// validPrefix: lowercase letters, digits and inner hyphens — always a valid start of an
// OpenSearch index name (no _, -, + first; no \ / * ? " < > | space , # :).
var validPrefix = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,99}$`)

// New returns a store over client; it makes no request.
func New(client *opensearchapi.Client, opts Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("vectors: nil OpenSearch client")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if !validPrefix.MatchString(opts.Prefix) || strings.HasSuffix(opts.Prefix, "-") {
		return nil, fmt.Errorf("vectors: index prefix %q must be lowercase letters, digits and inner hyphens", opts.Prefix)
	}
	if opts.Shards <= 0 {
		opts.Shards = 1
	}
	if opts.Replicas < 0 {
		return nil, fmt.Errorf("vectors: negative replica count %d", opts.Replicas)
	}
	return &Store{client: client, prefix: opts.Prefix, shards: opts.Shards, replicas: opts.Replicas, dims: map[string]int{}}, nil
}

// NewClient builds an opensearch-go client for endpoint. With awsCfg it signs every request
// with SigV4 for the service "es" (an Amazon OpenSearch Service domain; the template's
// DomainEndpoint has no scheme, so https is assumed); without it, it speaks plain HTTP as to
// the local stand-in. Throttling (429) and gateway errors are retried with backoff. transport,
// when not nil, carries the HTTP requests (tests count them with it).
func NewClient(endpoint string, awsCfg *aws.Config, transport http.RoundTripper) (*opensearchapi.Client, error) {
	addr, err := endpointURL(endpoint)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(addr)
	if err != nil || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("vectors: OpenSearch endpoint %q is not an http(s) URL", endpoint)
	}
	cfg := opensearchtransport.Config{
		URLs:          []*url.URL{u},
		Transport:     transport,
		RetryOnStatus: []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout},
		MaxRetries:    3,
		RetryBackoff:  func(attempt int) time.Duration { return backoff.Delay(100*time.Millisecond, 2*time.Second, attempt) },
		// The client would otherwise poll GET /_nodes/_local/stats every few seconds in the
		// background: requests nobody asked for, on a one-node domain to no purpose.
		NodeStatsInterval: -1,
	}
	if awsCfg != nil {
		if awsCfg.Region == "" {
			return nil, errors.New("vectors: SigV4 signing needs an AWS region")
		}
		sig, err := awsv2.NewSignerWithService(*awsCfg, "es")
		if err != nil {
			return nil, fmt.Errorf("vectors: SigV4 signer: %w", err)
		}
		cfg.Signer = sig
	}
	tp, err := opensearchtransport.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("vectors: OpenSearch client for %s: %w", addr, err)
	}
	return opensearchapi.NewFromClient(&opensearch.Client{Transport: tp}), nil
}

// endpointURL adds https:// to a bare host name (what CloudFormation's DomainEndpoint gives).
func endpointURL(endpoint string) (string, error) {
	endpoint = strings.TrimSpace(endpoint)
	if endpoint == "" {
		return "", errors.New("vectors: empty OpenSearch endpoint")
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "https://" + endpoint
	}
	return strings.TrimRight(endpoint, "/"), nil
}

// maxIndexName is OpenSearch's limit on index names (bytes).
const maxIndexName = 255

// IndexName is the index of one embedding space: "<prefix>-<model slug>-<dims>-v2", lowercase,
// the slug made of the model's letters and digits joined by single hyphens
// ("agentorch-kb-local-use-lite-512-v2", "agentorch-kb-amazon-titan-embed-text-v2-0-1024-v2"; the
// -v2 is the mapping's version, indexSchema). A name that would pass OpenSearch's 255 bytes keeps
// a hash of the model instead of its tail.
func (s *Store) IndexName(model string, dims int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(model) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	slug := b.String()
	if slug == "" {
		slug = "model"
	}
	suffix := "-" + strconv.Itoa(dims) + indexSchema
	if len(s.prefix)+1+len(slug)+len(suffix) > maxIndexName {
		sum := sha256.Sum256([]byte(model))
		h := hex.EncodeToString(sum[:6])
		keep := maxIndexName - len(s.prefix) - 1 - len(suffix) - len(h) - 1
		slug = strings.TrimRight(slug[:keep], "-") + "-" + h
	}
	return s.prefix + "-" + slug + suffix
}

// Legacy reports whether index was made before today's mapping (no english sub-field): its
// knowledge bases still search (BM25 on the standard field alone) and a sync moves them to
// IndexName's index.
func (s *Store) Legacy(index string) bool {
	return index != "" && !strings.HasSuffix(index, indexSchema)
}

// AllIndices is the expression naming every index of this store ("<prefix>-*"), for deletes that
// must reach whatever embedding space a file or knowledge base was indexed in.
func (s *Store) AllIndices() string { return s.prefix + "-*" }

// ChunkID is the deterministic document _id of a chunk: re-indexing a file overwrites its
// chunks instead of adding copies.
func ChunkID(kbID, fileID string, chunkIndex int) string {
	sum := sha256.Sum256([]byte(kbID + "\x00" + fileID + "\x00" + strconv.Itoa(chunkIndex)))
	return hex.EncodeToString(sum[:20])
}
