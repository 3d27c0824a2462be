package postgres

// LeaseForEventSQL is leaseForEventSQL, for the plan test.
const LeaseForEventSQL = leaseForEventSQL
