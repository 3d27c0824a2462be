package signin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// OIDC is a generic OpenID Connect provider, found by discovery at issuer. The person's id is
// the ID token's claim idClaim ("sub" when empty), prefixed with platform ("slack" makes
// "slack:<claim>"; the caller allows only platforms whose ids are never typed in). PKCE is used when the provider's discovery document offers S256.
func OIDC(ctx context.Context, issuer, clientID, secret, idClaim, platform string) (*Provider, error) {
	op, err := oidc.NewProvider(ctx, issuer)
	if err != nil {
		return nil, fmt.Errorf("OIDC_ISSUER %s: discovery failed: %w", issuer, err)
	}
	var meta struct {
		Methods []string `json:"code_challenge_methods_supported"`
	}
	if err := op.Claims(&meta); err != nil {
		meta.Methods = nil // a document that does not decode (NewProvider read it already) offers no PKCE
	}
	if idClaim == "" {
		idClaim = "sub"
	}
	p := oidcProvider("oidc", "Sign in", op, clientID, secret, idClaim, platform, []string{oidc.ScopeOpenID, "profile"})
	p.PKCE = slices.Contains(meta.Methods, "S256")
	return p, nil
}

// SlackClaim is where Slack's ID token carries the person's Slack user id.
const SlackClaim = "https://slack.com/user_id"

// Slack is "Sign in with Slack" (OpenID Connect). base is Slack's origin, https://slack.com, or a
// fake's in tests; Slack's endpoints are fixed, so no discovery request is made at start.
func Slack(ctx context.Context, base, clientID, secret string) *Provider {
	base = strings.TrimSuffix(base, "/")
	op := (&oidc.ProviderConfig{IssuerURL: base, AuthURL: base + "/openid/connect/authorize",
		TokenURL: base + "/api/openid.connect.token", UserInfoURL: base + "/api/openid.connect.userInfo",
		JWKSURL: base + "/openid/connect/keys", Algorithms: []string{oidc.RS256}}).NewProvider(ctx)
	return oidcProvider("slack", "Sign in with Slack", op, clientID, secret, SlackClaim, "slack", []string{oidc.ScopeOpenID, "profile"})
}

func oidcProvider(name, label string, op *oidc.Provider, clientID, secret, idClaim, platform string, scopes []string) *Provider {
	verifier := op.Verifier(&oidc.Config{ClientID: clientID})
	p := &Provider{Name: name, Label: label,
		OAuth: oauth2.Config{ClientID: clientID, ClientSecret: secret, Endpoint: op.Endpoint(), Scopes: scopes}}
	p.identify = func(ctx context.Context, tok *oauth2.Token, nonce string) (string, string, error) {
		raw, _ := tok.Extra("id_token").(string)
		if raw == "" {
			return "", "", errors.New("the provider sent no ID token")
		}
		idt, err := verifier.Verify(ctx, raw)
		if err != nil {
			return "", "", fmt.Errorf("the ID token is not valid: %w", err)
		}
		if idt.Nonce != nonce {
			return "", "", errors.New("the ID token's nonce is not this sign-in's")
		}
		var claims map[string]any
		if err := idt.Claims(&claims); err != nil {
			return "", "", fmt.Errorf("read the ID token: %w", err)
		}
		user, _ := claims[idClaim].(string)
		if !idPattern.MatchString(user) {
			return "", "", fmt.Errorf("the ID token has no usable claim %q", idClaim)
		}
		name, _ := claims["name"].(string)
		if name == "" {
			name, _ = claims["preferred_username"].(string)
		}
		return platform + ":" + user, name, nil
	}
	return p
}

// idPattern is what a provider's id may be to become a user id: no spaces, no ':'.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,128}$`)

// Discord is Discord OAuth2 with the identify scope; the id is /api/users/@me's. origin is
// https://discord.com, or a fake's (DISCORD_API_URL). Discord is not an OIDC provider, so there is
// no ID token: the state is what binds the answer to this browser.
func Discord(origin, clientID, secret string) *Provider {
	origin = strings.TrimSuffix(strings.TrimSuffix(origin, "/"), "/api")
	api := origin + "/api"
	p := &Provider{Name: "discord", Label: "Sign in with Discord",
		OAuth: oauth2.Config{ClientID: clientID, ClientSecret: secret, Scopes: []string{"identify"},
			Endpoint: oauth2.Endpoint{AuthURL: origin + "/oauth2/authorize", TokenURL: api + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams}}}
	p.identify = func(ctx context.Context, tok *oauth2.Token, _ string) (string, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, api+"/users/@me", nil)
		if err != nil {
			return "", "", err
		}
		resp, err := p.OAuth.Client(ctx, tok).Do(req)
		if err != nil {
			return "", "", fmt.Errorf("Discord did not say who you are: %w", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return "", "", fmt.Errorf("Discord did not say who you are (%s)", resp.Status)
		}
		var me struct {
			ID         string `json:"id"`
			Username   string `json:"username"`
			GlobalName string `json:"global_name"`
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&me); err != nil || !idPattern.MatchString(me.ID) {
			return "", "", errors.New("Discord's answer has no user id")
		}
		name := me.GlobalName
		if name == "" {
			name = me.Username
		}
		return "discord:" + me.ID, name, nil
	}
	return p
}
