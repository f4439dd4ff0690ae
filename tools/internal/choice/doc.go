// Package choice reads a setting that takes one of a few fixed words,
// the first of them its default, with one wording of the error for every
// such setting, and says what an unset numeric setting means. It imports
// nothing of the project.
package choice
