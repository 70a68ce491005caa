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
