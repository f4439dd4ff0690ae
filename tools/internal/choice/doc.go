// Package choice reads a setting that takes one of a few fixed words,
// the first of them its default, with one wording of the error for every
// such setting. It imports nothing of the project.
package choice
