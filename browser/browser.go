// Package browser drives real Chromium through one verified page load and returns one result record.
package browser
