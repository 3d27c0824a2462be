package postgres

// FindLifecycleSQL is findLifecycleSQL, for the plan test.
const FindLifecycleSQL = findLifecycleSQL
