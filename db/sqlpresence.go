package db

// Announcements that a process is alive (a home, a terminal attachment) until expires_at: one
// liveness rule for every statement that reads or forgets them.

import "time"

// live is the condition that an announcement (a home, a terminal attachment; its columns prefixed
// with prefix) has not expired at now: the process that made it is alive.
func (q *SQL) live(prefix string, now time.Time) string {
	return prefix + "expires_at > " + q.Time(now)
}

// forgetExpired deletes the announcements of table that expired before now.
func (d Dialect) forgetExpired(table string, now time.Time) (string, []any) {
	q := d.Query()
	return "DELETE FROM " + table + " WHERE expires_at < " + q.Time(now), q.Args
}

// ForgetExpiredHomes deletes the home announcements that expired before now (Store.AnnounceHome).
func (d Dialect) ForgetExpiredHomes(now time.Time) (string, []any) {
	return d.forgetExpired("workspace_homes", now)
}

// AnnounceHome records, or renews, that h.Owner sees the home h.Token until expires.
func (d Dialect) AnnounceHome(h Home, expires time.Time) (string, []any) {
	q := d.Query()
	return "INSERT INTO workspace_homes (home_token, owner, host, remote, expires_at) VALUES (" + q.Arg(h.Token) + ", " +
		q.Arg(h.Owner) + ", " + q.Arg(h.Host) + ", " + q.Arg(h.Remote) + ", " + q.Time(expires) + `)
		ON CONFLICT (home_token, owner) DO UPDATE SET host = excluded.host, remote = excluded.remote, expires_at = excluded.expires_at`, q.Args
}

// LiveHomes selects the home announcements live at now, by owner (Store.LiveHomes).
func (d Dialect) LiveHomes(now time.Time) (string, []any) {
	q := d.Query()
	return "SELECT home_token, owner, host, remote, expires_at FROM workspace_homes WHERE " + q.live("", now) +
		" ORDER BY owner, home_token", q.Args
}

// ForgetExpiredAttachments deletes the terminal attachments that expired before now (their
// terminals were killed) (Store.AttachTerminal).
func (d Dialect) ForgetExpiredAttachments(now time.Time) (string, []any) {
	return d.forgetExpired("terminal_attachments", now)
}

// AttachTerminal records, or renews, that the terminal owner is attached to a conversation until
// expires.
func (d Dialect) AttachTerminal(conversationID, owner string, expires time.Time) (string, []any) {
	q := d.Query()
	return "INSERT INTO terminal_attachments (conversation_id, owner, expires_at) VALUES (" + q.Arg(conversationID) + ", " +
		q.Arg(owner) + ", " + q.Time(expires) + `)
		ON CONFLICT (conversation_id, owner) DO UPDATE SET expires_at = excluded.expires_at`, q.Args
}

// DetachTerminal deletes every attachment of the terminal owner.
func (d Dialect) DetachTerminal(owner string) (string, []any) {
	q := d.Query()
	return "DELETE FROM terminal_attachments WHERE owner = " + q.Arg(owner), q.Args
}
