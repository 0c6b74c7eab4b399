// Package scripts holds the shell scripts of the build (set-up, test
// tiers, demo, lint) and, in its tests, checks of the parts of them that
// can run without root: the derivation of apt sources in apt-sources.sh.
package scripts
