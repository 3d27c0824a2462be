package discord

import (
	"net/http"
	"net/url"
	"strings"
)

// discordHost is the host of every REST endpoint discordgo builds.
const discordHost = "discord.com"

// apiTransport is the one place where DISCORD_API_URL takes effect: it sends each request that
// discordgo addresses to https://discord.com/ to base instead, keeping the path.
//
// discordgo derives its endpoints from package variables (EndpointDiscord, EndpointAPI, ...) at
// init. Reassigning them would redirect every session in the process and race with requests in
// flight, so the adapter rewrites per session, in its HTTP client, instead. The gateway needs no
// rewrite: discordgo asks GET /gateway for its URL, and the server at base answers with its own.
type apiTransport struct {
	base *url.URL
	next http.RoundTripper
}

func (t apiTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != discordHost {
		return t.next.RoundTrip(r)
	}
	out := r.Clone(r.Context()) // a RoundTripper must not modify the request it was given
	out.URL.Scheme = t.base.Scheme
	out.URL.Host = t.base.Host
	prefix := strings.TrimSuffix(t.base.Path, "/")
	out.URL.Path = prefix + r.URL.Path
	if r.URL.RawPath != "" {
		out.URL.RawPath = prefix + r.URL.RawPath
	}
	out.Host = t.base.Host
	return t.next.RoundTrip(out)
}
