package discord

import (
	"errors"
	"net/url"

	"go.uber.org/zap"
)

// redact drops the URL from a transport error: interaction webhook URLs carry the interaction
// token, which must never reach a log or a caller's error message.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &url.Error{Op: ue.Op, URL: "(redacted)", Err: ue.Err}
	}
	return err
}

// errField logs err without any token it may carry.
func errField(err error) zap.Field { return zap.Error(redact(err)) }
