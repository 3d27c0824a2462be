package discord

import (
	"testing"

	"github.com/bwmarrin/discordgo"

	"threadflow/adapters/discord/discordfake"
	"threadflow/testkit"
)

// pinnedWithoutResumeURL is the discordgo release this module pins, which resumes a dropped
// gateway session on the URL it first connected to instead of READY's resume_gateway_url.
const pinnedWithoutResumeURL = "0.29.0"

// After a dropped connection Discord expects the client to resume on the resume_gateway_url its
// READY gave; resuming elsewhere is answered with more disconnects. The fake records the URL each
// connection dialled and whether it resumed.
func TestGatewayResumesOnReadyResumeURL(t *testing.T) {
	e := newEnv(t)
	e.fake.DropSessions()
	var resumed discordfake.Connection
	e.fake.WaitFor(t, testkit.Deadline, func(s *discordfake.Server) bool {
		for _, c := range s.Connections() {
			if c.Resumed {
				resumed = c
				return true
			}
		}
		return false
	})
	if discordgo.VERSION == pinnedWithoutResumeURL {
		// What this release does today, pinned so a change is noticed.
		if resumed.Path != "/gateway" {
			t.Fatalf("discordgo %s resumed on %q; it used to resume on the first gateway URL (/gateway)", discordgo.VERSION, resumed.Path)
		}
		t.Skipf("discordgo v%s resumes on the first gateway URL (%s), not READY's resume_gateway_url (%s). "+
			"The fix is bwmarrin/discordgo commit 98dc133 on master, not in any release, and this machine's Go module proxy "+
			"answers 403 for github.com/bwmarrin/discordgo@98dc133 and @master. To finish: "+
			"`go get github.com/bwmarrin/discordgo@98dc133` (or the first release that contains it), say why in go.mod's comment, "+
			"and this test then asserts the resume URL instead of skipping.",
			discordgo.VERSION, resumed.Path, discordfake.ResumePath)
	}
	if resumed.Path != discordfake.ResumePath {
		t.Errorf("resumed on %q, want READY's resume_gateway_url %q", resumed.Path, discordfake.ResumePath)
	}
}
