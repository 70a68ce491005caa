package tools

// The tests look zones up as the functions that run tools do, with the embedded database
// (shared/app/run), not whatever the machine has.
import _ "time/tzdata"
