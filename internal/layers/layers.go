// Package layers holds the tests that keep pltlab's shape: package dependencies point the way
// docs/design.md ("Packages") draws them, and no function is over 100 lines (issue 51); it has
// no code of its own.
package layers
