package discord

import (
	"slices"
	"testing"

	"threadflow/conversation"
)

// Only mention spans of Discord ids ping, and allowed_mentions lets exactly those through.
func TestMentionsRenderOnlyNamedDiscordIDs(t *testing.T) {
	t.Parallel()
	text := conversation.T(conversation.P("🔔 "), conversation.M("discord:role:930000000000000001"), conversation.P(" "),
		conversation.M("discord:920000000000000002"), conversation.P(" "), conversation.M("slack:U1"), conversation.P(" "),
		conversation.M("discord:<@&1>"), conversation.P(" "), conversation.U("<@920000000000000009> @everyone"))
	want := "🔔 <@&930000000000000001> <@920000000000000002> slack\\:U1 discord\\:<\u200b@&1\\> " +
		"<\u200b@920000000000000009\\> @\u200beveryone"
	if got := Render(text); got != want {
		t.Errorf("Render = %q\nwant     %q", got, want)
	}
	a := allowedMentions(text)
	if a.Parse == nil || len(a.Parse) != 0 || !slices.Equal(a.Roles, []string{"930000000000000001"}) ||
		!slices.Equal(a.Users, []string{"920000000000000002"}) {
		t.Errorf("allowed mentions %+v; want parse [] and exactly the named role and user", a)
	}
}
