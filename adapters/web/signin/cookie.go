package signin

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// A sealer signs small JSON values into cookie values and reads them back: base64url(JSON) "."
// base64url(HMAC-SHA256). The purpose ("session", "flow") is part of what is signed, so a value
// made for one cookie is never accepted as another. The value is signed, not encrypted: it holds
// nothing secret (a platform user id, a name, a state the provider sees anyway, a PKCE verifier
// that is useless without the provider's code).
type sealer struct{ key []byte }

// errBadCookie is every reason a cookie is not accepted; which one is not told to the client.
var errBadCookie = errors.New("signin: cookie not valid")

// expiring is what every sealed value carries: when it stops being accepted.
type expiring interface{ expiry() time.Time }

func (s sealer) mac(purpose, payload string) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(purpose + "\x00" + payload))
	return h.Sum(nil)
}

func (s sealer) seal(purpose string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	payload := base64.RawURLEncoding.EncodeToString(b)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(purpose, payload)), nil
}

// open checks the signature and the expiry of value and decodes it into v.
func (s sealer) open(purpose, value string, now time.Time, v expiring) error {
	payload, sig, ok := strings.Cut(value, ".")
	if !ok {
		return errBadCookie
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(purpose, payload)) {
		return errBadCookie
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || json.Unmarshal(b, v) != nil {
		return errBadCookie
	}
	if !now.Before(v.expiry()) {
		return errBadCookie
	}
	return nil
}
