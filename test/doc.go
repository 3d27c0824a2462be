// Package test holds Threadflow's end-to-end tests: the real bot binary (built once per test
// binary from ./cmd/bot) started as a process against loopback fakes of the Slack and Discord APIs
// (adapters/slack/slackfake, adapters/discord/discordfake), on SQLite and on PostgreSQL. The tests assert what a person
// in the chat would see. The package has no non-test code besides this comment.
package test
