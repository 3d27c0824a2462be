// Package test holds Threadflow's end-to-end tests: the real bot binary (built once per test
// binary from ./cmd/bot by testkit/botproc) started as a process against loopback fakes of the
// Slack and Discord APIs (adapters/slack/slackfake, adapters/discord/discordfake), from a terminal
// and through the web chat, on SQLite and on PostgreSQL. The tests assert what a person in the chat
// would see. The chat acceptance suite (chat_suite_test.go) runs one list of scenarios on every
// platform through one small interface (chat_slack, chat_discord, chat_terminal and chat_web
// implement it); what only one platform has stays in that platform's own tests. The package has no
// non-test code besides this comment.
package test
