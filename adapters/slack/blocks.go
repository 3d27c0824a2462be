package slack

import (
	"fmt"
	"strings"

	slackapi "github.com/slack-go/slack"

	"threadflow/conversation"
)

// content returns the options carrying text and, when there are buttons, Block Kit blocks: a
// section with the same mrkdwn and an actions block. text stays set as the fallback Slack shows in
// notifications and in clients without Block Kit.
func content(text string, buttons []conversation.Button) []slackapi.MsgOption {
	if len(buttons) == 0 {
		return []slackapi.MsgOption{slackapi.MsgOptionText(text, false)}
	}
	var blocks []slackapi.Block
	if strings.TrimSpace(text) != "" {
		blocks = append(blocks, slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, text, false, false), nil, nil))
	} else {
		text = fallbackText(buttons)
	}
	blocks = append(blocks, slackapi.NewActionBlock("threadflow.actions", buttonElements(buttons)...))
	return []slackapi.MsgOption{slackapi.MsgOptionText(text, false), slackapi.MsgOptionBlocks(blocks...)}
}

// buttonElements builds one button per Button; the value is the text command a click runs, and the
// action id is unique within the message, as Slack requires.
func buttonElements(buttons []conversation.Button) []slackapi.BlockElement {
	elems := make([]slackapi.BlockElement, 0, len(buttons))
	for i, b := range buttons {
		label := slackapi.NewTextBlockObject(slackapi.PlainTextType, truncate(firstNonEmpty(b.Label, b.Command), labelLimit), true, false)
		btn := slackapi.NewButtonBlockElement(fmt.Sprintf("%sbutton.%d", actionPrefix, i), b.Command, label)
		switch b.Style {
		case conversation.StylePrimary:
			btn.WithStyle(slackapi.StylePrimary)
		case conversation.StyleDanger:
			btn.WithStyle(slackapi.StyleDanger)
		}
		elems = append(elems, btn)
	}
	return elems
}

// fallbackText lists the buttons' commands for a reply that is only buttons.
func fallbackText(buttons []conversation.Button) string {
	cmds := make([]string, len(buttons))
	for i, b := range buttons {
		cmds[i] = "`" + escape(b.Command) + "`"
	}
	return strings.Join(cmds, " · ")
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
