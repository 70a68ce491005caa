package rerank

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentorch/agentorch/shared/domain"
)

// BenchmarkRerank is one Rerank request of 20 passages of about 100 words, through the real SDK
// client over HTTP to the in-process stand-in: the adapter's and the SDK's own cost (building,
// serialising, signing, sending, decoding, mapping back), without Bedrock's model time.
//
//	go test ./shared/rerank -run '^$' -bench Rerank
func BenchmarkRerank(b *testing.B) {
	_, r := standIn(b, "us-west-2", AmazonRerank)
	texts := make([]string, 20)
	for i := range texts {
		texts[i] = strings.Repeat(fmt.Sprintf("passage %d about refunds shipping and returns ", i), 14)
	}
	req := domain.RerankRequest{Query: "how many days until the refund is paid", Texts: texts, TopN: 5}
	b.ResetTimer()
	for range b.N {
		if got, err := r.Rerank(context.Background(), req); err != nil || len(got) != 5 {
			b.Fatalf("%v %v", got, err)
		}
	}
}
