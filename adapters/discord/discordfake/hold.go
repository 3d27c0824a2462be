package discordfake

// HoldPost makes the next channel message creation whose content contains sub wait until release
// is called (or the test ends): with posted, the message is already in its channel while the answer
// waits, as when a bot dies after Discord accepted a message and before it heard so; without, it is
// created only on release and only if the bot still waits for it, as when a bot dies before its
// request reached Discord. arrived is closed once such a post came in.
func (s *Server) HoldPost(sub string, posted bool) (arrived <-chan struct{}, release func()) {
	return s.hold.Set(s.t, sub, posted)
}
