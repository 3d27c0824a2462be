package execution

import "threadflow/db"

// nested is what the new child run owes (Executor.Nested): its line in its parent's thread.
func (x *Executor) nested(child db.Run) []db.Owed {
	if x.Nested == nil {
		return nil
	}
	return x.Nested(child)
}
