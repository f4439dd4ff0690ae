// Package utf8cut cuts text on character boundaries, for the tools that
// cap what they show: a byte limit never splits a character. It imports
// nothing of the project.
package utf8cut
