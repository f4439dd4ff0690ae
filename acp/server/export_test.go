package server

// Fresh is fresh, for the table test of what a poll of a terminal adds.
var Fresh = fresh
