package s3_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/s3"
)

func TestMain(m *testing.M) { localstack.RunTests(m) }

// The adapter against the S3 stand-in over the real protocol (path-style, as locally configured).
func TestStore(t *testing.T) {
	env := localstack.NewTestEnv(t)
	st := s3.NewStore(platform.S3Client(env.AWS, env.Config), env.Config.Bucket)
	ctx := context.Background()
	data := []byte("\x89PNG\r\n\x1a\nnot really")
	if err := st.Put(ctx, "tmp/images/a.png", data, "image/png"); err != nil {
		t.Fatal(err)
	}
	got, ct, err := st.Get(ctx, "tmp/images/a.png", 1<<20)
	if err != nil || !bytes.Equal(got, data) || ct != "image/png" {
		t.Fatalf("get = %q %q %v", got, ct, err)
	}
	if _, _, err := st.Get(ctx, "tmp/images/missing.png", 1<<20); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("missing object: %v", err)
	}
	if _, _, err := st.Get(ctx, "tmp/images/a.png", 4); domain.KindOf(err) != domain.KindTooLarge {
		t.Errorf("object over the limit: %v", err)
	}
}
