package platform

import (
	"io"
	"log/slog"
	"os"
	"strings"
)

// Logger builds the process logger: JSON in Lambda, text locally.
func Logger(c Config) *slog.Logger {
	return NewLogger(os.Stderr, c.LogFormat, c.LogLevel)
}

// NewLogger builds a logger writing to w in the given format and level.
func NewLogger(w io.Writer, format, level string) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func getenvEmpty(name string) bool { return os.Getenv(name) == "" }

// HasAWSCredentials reports whether the environment names real AWS credentials (keys, a profile,
// or a container or web-identity provider), as opposed to the local stack's static test ones.
func HasAWSCredentials() bool {
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"} {
		if os.Getenv(v) != "" && os.Getenv(v) != "test" {
			return true
		}
	}
	return false
}
