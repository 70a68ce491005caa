package awserr_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/agentorch/agentorch/shared/awserr"
)

func TestMessage(t *testing.T) {
	long := strings.Repeat("é", awserr.MaxMessageRunes+5)
	for _, c := range []struct{ in, want string }{
		{"", "invalid request"},
		{"  \n", "invalid request"},
		{"bad\tfield\nvalue", "bad field value"},
		{long, strings.Repeat("é", awserr.MaxMessageRunes) + "…"},
	} {
		if got := awserr.Message(c.in); got != c.want {
			t.Errorf("Message(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDropped(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("send: %w", syscall.ECONNRESET), true},
		{errors.New("ValidationException: bad"), false},
	} {
		if got := awserr.Dropped(c.err); got != c.want {
			t.Errorf("Dropped(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
