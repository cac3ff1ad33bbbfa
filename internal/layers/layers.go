// Package layers holds the test that keeps pltlab's package dependencies pointing the way
// docs/design.md ("Packages") draws them; it has no code of its own.
package layers
