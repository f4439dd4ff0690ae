// Package config resolves dshd's settings from flags, DSHD_* environment
// variables and the config file ($XDG_CONFIG_HOME/dshd/config.json), in that
// order of precedence, over built-in defaults, and checks them at start.
//
// Every setting is declared once, as a row of the table in config.go. The
// row drives the flag and its help, the environment variable, the file key,
// the parsing and the range check, and which commands use it. A mistake
// anywhere (an unknown key, a value of the wrong type or out of range, a
// flag the command does not use) is an [*Error]: one line naming the
// setting, where its value came from (the flag, the variable, or
// file:line:column) and, when there is one, the closest valid name. Later
// stages that find a value wrong (the daemon checking subagent bindings
// against its providers) report it through [Settings.Invalid], so their
// errors carry the same origin.
//
// The package reads the environment only through the lookup function it is
// given and the file it is pointed at; it starts no goroutines.
package config
