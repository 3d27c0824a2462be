package slack

import (
	"testing"

	"threadflow/conversation"
)

// Only mention spans of Slack ids ping; user text shaped like a mention, another platform's id, or
// an id that could close the mention early stays inert.
func TestMentionsRenderOnlyNamedSlackIDs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		span conversation.Span
		want string
	}{
		{conversation.M("slack:U0123ABCD"), "<@U0123ABCD>"},
		{conversation.M("slack:group:S0456EFGH"), "<!subteam^S0456EFGH>"},
		{conversation.M("discord:4567"), "discord:4567"},
		{conversation.M("slack:U1> <!channel"), "slack:U1&gt; &lt;!channel"},
		{conversation.M("slack:group:s-lower"), "slack:group:s-lower"},
		{conversation.U("<@U0123ABCD> <!subteam^S1>"), "&lt;@U0123ABCD&gt; &lt;!subteam^S1&gt;"},
	} {
		if got := Render(conversation.T(tt.span)); got != tt.want {
			t.Errorf("Render(%+v) = %q, want %q", tt.span, got, tt.want)
		}
	}
}
