// Package pages parses page specs and generates deterministic image-only test pages of exact byte sizes.
package pages
