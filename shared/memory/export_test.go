package memory

// SameFact is sameFact, for the measurement of duplicates (duplicate_test.go).
var SameFact = sameFact
