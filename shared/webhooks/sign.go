package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers (https://www.standardwebhooks.com): the message id, the same on
// every attempt of one message; the attempt's Unix time in seconds; the signatures.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Key is the HMAC key of a secret: the base64 after whsec_.
func Key(secret string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(k) == 0 {
		return nil, fmt.Errorf("webhook secret is not whsec_ and base64")
	}
	return k, nil
}

// Sign is the webhook-signature value of one attempt: "v1,<base64 HMAC-SHA256 of
// id.timestamp.body>" under each secret, separated by spaces (during a rotation the previous
// secret signs beside the new one, and a receiver accepts either).
func Sign(secrets []string, id string, at time.Time, body []byte) (string, error) {
	ts := strconv.FormatInt(at.Unix(), 10)
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := Key(s)
		if err != nil {
			return "", err
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id))
		m.Write([]byte{'.'})
		m.Write([]byte(ts))
		m.Write([]byte{'.'})
		m.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}

// SetHeaders sets the Standard Webhooks headers of one attempt of message id on h.
func SetHeaders(h http.Header, secrets []string, id string, at time.Time, body []byte) error {
	sig, err := Sign(secrets, id, at, body)
	if err != nil {
		return err
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return nil
}
