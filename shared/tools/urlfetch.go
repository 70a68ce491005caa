package tools

import (
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/agentorch/agentorch/shared/domain"
)

// URLFetcher downloads user-supplied public URLs (images and files in execute content) through
// the same SSRF guard as http_request: public addresses only, checked after DNS resolution and on
// every redirect.
type URLFetcher struct {
	f *fetcher
}

// NewURLFetcher builds the guarded downloader.
func NewURLFetcher(opts Options) *URLFetcher {
	return &URLFetcher{f: newFetcher(opts.withDefaults())}
}

// Fetch GETs rawURL and returns at most maxBytes of its body with its Content-Type. Refused
// addresses, failures and bodies over the limit are invalid-request errors with safe messages.
func (u *URLFetcher) Fetch(ctx context.Context, rawURL string, maxBytes int64) ([]byte, string, error) {
	parsed, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", domain.Errorf(domain.KindInvalid, "not a URL")
	}
	if err := u.f.policy.CheckURL(parsed); err != nil {
		return nil, "", domain.Errorf(domain.KindInvalid, "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, u.f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, "", domain.Errorf(domain.KindInvalid, "not a URL")
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := u.f.client.Do(req)
	if err != nil {
		return nil, "", &domain.Error{Kind: domain.KindInvalid, Message: "the address could not be fetched (refused, unreachable or timed out)", Err: err}
	}
	defer func() { _ = resp.Body.Close() }() // a response body: read or not, nothing is lost
	if resp.StatusCode != http.StatusOK {
		return nil, "", domain.Errorf(domain.KindInvalid, "the address answered HTTP %d", resp.StatusCode)
	}
	if resp.ContentLength > maxBytes {
		return nil, "", domain.Errorf(domain.KindInvalid, "the file is larger than the limit of %d bytes", maxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, "", &domain.Error{Kind: domain.KindInvalid, Message: "the download failed", Err: err}
	}
	if int64(len(data)) > maxBytes {
		return nil, "", domain.Errorf(domain.KindInvalid, "the file is larger than the limit of %d bytes", maxBytes)
	}
	return data, resp.Header.Get("Content-Type"), nil
}
